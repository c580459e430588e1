package protocol

import (
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"testing"
	"time"
)

// FuzzReadFrames feeds a connection arbitrary bytes, size fields
// included, through a tiny memory pool: whatever arrives, the connection
// must end without a panic and give every byte of the pool back.
func FuzzReadFrames(f *testing.F) {
	for _, frame := range seedFrames() {
		sized := binary.BigEndian.AppendUint32(nil, uint32(len(frame)))
		f.Add(append(sized, frame...))
	}
	f.Add(declaredFrame(DefaultMaxRequestSize, 300))
	f.Add(declaredFrame(1<<31-1, 10))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0})
	f.Add(append(declaredFrame(40000, 40000), declaredFrame(20, 20)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := NewServer(ServerConfig{MaxRequestSize: 1 << 20, QueuedMaxRequestBytes: 64 << 10, StallGrace: 10 * time.Millisecond},
			newFakeHandler(), slog.New(slog.DiscardHandler))
		defer s.Close()
		server, client := net.Pipe()
		c := newConn(s, context.Background(), server, &ConnInfo{ID: 1, Listener: "PLAINTEXT", LocalAddr: server.LocalAddr(), RemoteAddr: server.RemoteAddr()}, &ListenerConfig{Name: "PLAINTEXT"})
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.serve()
		}()
		go func() {
			// Responses are read and dropped so that writes never block.
			buf := make([]byte, 4096)
			for {
				if _, err := client.Read(buf); err != nil {
					return
				}
			}
		}()
		_ = client.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = client.Write(in)
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("connection did not end after its client closed")
		}
		if used := poolUsed(s); used != 0 {
			t.Fatalf("memory pool holds %d bytes after the connection ended", used)
		}
	})
}
