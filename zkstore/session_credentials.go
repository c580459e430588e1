package zkstore

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// SessionCredentials are what a client needs to resume a ZooKeeper
// session on a new connection: the id and the password the server handed
// out when it created the session. Whoever holds them can act as that
// session, so they are kept like a key (owner-only file mode).
type SessionCredentials struct {
	ID       int64
	Password []byte
}

// DialOption adjusts Dial.
type DialOption func(*dialOptions)

type dialOptions struct {
	onSession func(SessionCredentials)
}

// OnSession calls f each time the server grants a session on a new
// connection (the first one, and a new one after expiry; a resumed
// session reports the same credentials again). f runs on the client's
// connection goroutine before the session is reported as connected, so a
// caller that stores the credentials has them stored before it can use
// the session for anything, such as an ephemeral registration.
func OnSession(f func(SessionCredentials)) DialOption {
	return func(o *dialOptions) { o.onSession = f }
}

// credentialDialer dials TCP and watches the first frame the server sends
// on each connection, the ConnectResponse, for the session's id and
// password: go-zookeeper keeps the password to itself. Without onSession
// it is a plain TCP dialer.
func credentialDialer(onSession func(SessionCredentials)) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil || onSession == nil {
			return c, err
		}
		return &connectResponseTap{Conn: c, onSession: onSession}, nil
	}
}

// maxConnectResponse bounds what the tap buffers: a ConnectResponse is
// 4 length + 4 version + 4 timeout + 8 id + 4 + 16 password + 1 read-only
// bytes; anything much larger is not one and is left alone.
const maxConnectResponse = 256

// connectResponseTap copies what the client reads until the first frame
// is complete, decodes it once, and then only passes reads through.
type connectResponseTap struct {
	net.Conn
	onSession func(SessionCredentials)

	mu   sync.Mutex
	buf  []byte
	done bool
}

func (t *connectResponseTap) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if n > 0 {
		t.observe(p[:n])
	}
	return n, err
}

func (t *connectResponseTap) observe(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) < 4 {
		return
	}
	size := int(binary.BigEndian.Uint32(t.buf))
	if size > maxConnectResponse {
		t.done, t.buf = true, nil
		return
	}
	if len(t.buf) < 4+size {
		return
	}
	frame := t.buf[4 : 4+size]
	t.done, t.buf = true, nil
	if cred, ok := decodeConnectResponse(frame); ok {
		t.onSession(cred)
	}
}

// decodeConnectResponse reads ZooKeeper's ConnectResponse (jute):
// protocolVersion int32, timeOut int32, sessionId int64, passwd buffer,
// then an optional readOnly flag. A session id of 0 is the server's
// answer to a session that expired: no credentials.
func decodeConnectResponse(b []byte) (SessionCredentials, bool) {
	if len(b) < 20 {
		return SessionCredentials{}, false
	}
	id := int64(binary.BigEndian.Uint64(b[8:16]))
	plen := int32(binary.BigEndian.Uint32(b[16:20]))
	if id == 0 || plen < 0 || int(plen) > len(b)-20 {
		return SessionCredentials{}, false
	}
	return SessionCredentials{ID: id, Password: append([]byte(nil), b[20:20+plen]...)}, true
}
