package protocol

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// saslSeeds are whole client streams: exchanges that authenticate (v1
// and v0 handshakes, MULTI rounds, a re-authentication) followed by
// requests, and streams that must be refused.
func saslSeeds() [][]byte {
	id := "seed"
	frame := func(corr int32, r kmsg.Request) []byte { return encodeRequest(corr, &id, r) }
	hs := func(v int16, mech string) kmsg.Request {
		r := kmsg.NewPtrSASLHandshakeRequest()
		r.Version, r.Mechanism = v, mech
		return r
	}
	auth := func(v int16, tok string) kmsg.Request {
		r := kmsg.NewPtrSASLAuthenticateRequest()
		r.Version, r.SASLAuthBytes = v, []byte(tok)
		return r
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	plain := string(plainToken("alice", "alice-secret"))
	return [][]byte{
		cat(frame(1, apiVersionsAt(3)), frame(2, hs(1, "PLAIN")), frame(3, auth(2, plain)), frame(4, metadataReq())),
		cat(frame(1, hs(0, "PLAIN")), rawFrame([]byte(plain)), frame(2, metadataReq())),
		cat(frame(1, hs(1, "MULTI")), frame(2, auth(1, "bob")), frame(3, auth(1, "proof:bob-secret")), frame(4, auth(1, "ack")), frame(5, metadataReq())),
		cat(frame(1, hs(1, "PLAIN")), frame(2, auth(2, plain)), frame(3, hs(1, "PLAIN")), frame(4, auth(2, plain)), frame(5, metadataReq())),
		cat(frame(1, hs(1, "PLAIN")), frame(2, auth(2, plain)), frame(3, hs(1, "PLAIN")), frame(4, auth(2, string(plainToken("bob", "bob-secret"))))),
		cat(frame(1, metadataReq())),
		cat(frame(1, hs(1, "PLAIN")), frame(2, metadataReq())),
		cat(frame(1, hs(0, "MULTI")), rawFrame(nil), rawFrame([]byte("x"))),
	}
}

// FuzzSASLFrames feeds a SASL listener's connection arbitrary bytes. The
// first byte picks the listener's settings (a small
// sasl.server.max.receive.size, a session that expires at once). Whatever
// arrives, the connection ends without a panic, gives the memory pool
// back, and the handler sees nothing but ApiVersions unless the
// connection authenticated.
func FuzzSASLFrames(f *testing.F) {
	for _, s := range saslSeeds() {
		for _, mode := range []byte{0, 1, 2} {
			f.Add(append([]byte{mode}, s...))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		lc := saslListener("SASL_PLAINTEXT")
		if in[0]&1 != 0 {
			lc.SASLMaxReceiveSize = 96
		}
		if in[0]&2 != 0 {
			lc.ReauthMax = time.Nanosecond
		}
		h := newAuthHandler()
		s := NewServer(ServerConfig{MaxRequestSize: 1 << 20, QueuedMaxRequestBytes: 64 << 10, StallGrace: 10 * time.Millisecond},
			h, slog.New(slog.DiscardHandler))
		defer s.Close()
		server, client := net.Pipe()
		c := newConn(s, context.Background(), server, &ConnInfo{ID: 1, Listener: lc.Name, LocalAddr: server.LocalAddr(), RemoteAddr: server.RemoteAddr()}, &lc)
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.serve()
		}()
		go func() {
			buf := make([]byte, 4096)
			for {
				if _, err := client.Read(buf); err != nil {
					return
				}
			}
		}()
		_ = client.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = client.Write(in[1:])
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("connection did not end after its client closed")
		}
		if used := poolUsed(s); used != 0 {
			t.Fatalf("memory pool holds %d bytes after the connection ended", used)
		}
		for _, r := range h.handled() {
			// A SaslAuthenticate after authentication is the handler's to
			// refuse (Kafka's KafkaApis answers ILLEGAL_SASL_STATE); a
			// SaslHandshake is always a re-authentication.
			if r.key == saslHandshakeKey {
				t.Fatalf("handler saw a SaslHandshake: %+v", r)
			}
			if r.key != apiVersionsKey && r.principal == Anonymous {
				t.Fatalf("handler saw %+v before authentication", r)
			}
		}
	})
}
