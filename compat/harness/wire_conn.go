package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DialWireTLS is DialWire over TLS with cfg (ServerName defaults to the
// host dialled). The handshake's error is returned, not fatal: a test of
// a refused client certificate wants it. With TLS 1.3 a server that
// refuses the client's certificate says so after the client's side of the
// handshake completed, so the refusal may show only on the first read.
func DialWireTLS(t testing.TB, addr string, cfg *tls.Config, timeout time.Duration) (*Wire, error) {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { raw.Close() })
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		cfg.ServerName = host
	}
	conn := tls.Client(raw, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	w := &Wire{Addr: addr, conn: conn, fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID("kbroker-compat-wire"))}
	return w, conn.HandshakeContext(ctx)
}

// WriteRaw writes b to the connection as it is, within timeout: frames a
// well-behaved client would never send.
func (w *Wire) WriteRaw(b []byte, timeout time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err := w.conn.Write(b)
	return err
}

// AppendRequest is req as a size-prefixed frame with the next correlation
// id, at exactly req's version, for a test that sends it with WriteRaw
// (whole, cut short or altered).
func (w *Wire) AppendRequest(req kmsg.Request) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.corr++
	return w.fmt.AppendRequest(nil, req, w.corr)
}

// ErrStillOpen is WaitClosed's error when the peer kept the connection
// open for the whole wait.
var ErrStillOpen = errors.New("connection still open")

// WaitClosed reads until the peer closes the connection (end of stream,
// reset, or a TLS alert) and returns the bytes that arrived before; after
// timeout with the connection still open it returns ErrStillOpen. At most
// 1 MiB is read.
func (w *Wire) WaitClosed(timeout time.Duration) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < 1<<20 {
		n, err := w.conn.Read(buf)
		got = append(got, buf[:n]...)
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got, ErrStillOpen
		}
		return got, nil
	}
	return got, ErrStillOpen
}
