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

// handshakeTimeout bounds the wait for a server's answer to the session
// handshake. go-zookeeper waits ten times its read timeout (20/3 of the
// session timeout, two minutes at Kafka's default of 18 s) on a server
// that accepted the connection but does not answer, which a ZooKeeper
// that is still starting does: a broker whose reconnect landed there sat
// out of the cluster for that long after the server was serving. The
// Java client gives a connection sessionTimeout/servers to get its
// session; a third of the session timeout leaves room for a slow server
// and for another attempt before the session could expire.
func handshakeTimeout(sessionTimeout time.Duration) time.Duration {
	return max(sessionTimeout/3, time.Second)
}

// credentialDialer dials TCP and watches the first frame the server sends
// on each connection, the ConnectResponse: for the session's id and
// password (go-zookeeper keeps the password to itself) when onSession is
// set, and to stop capping the connection's deadlines at handshake. onRead,
// when set, hears of every read that brought bytes.
func credentialDialer(onSession func(SessionCredentials), onRead func(), handshake time.Duration) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		c, err := net.DialTimeout(network, address, timeout)
		if err != nil {
			return c, err
		}
		return &connectResponseTap{Conn: c, onSession: onSession, onRead: onRead, handshake: handshake}, nil
	}
}

// maxConnectResponse bounds what the tap buffers: a ConnectResponse is
// 4 length + 4 version + 4 timeout + 8 id + 4 + 16 password + 1 read-only
// bytes; anything much larger is not one and is left alone.
const maxConnectResponse = 256

// connectResponseTap copies what the client reads until the first frame
// is complete, decodes it once, and then only passes reads through. Until
// then, a deadline the client sets is brought forward to at most
// handshake from now (when handshake is set).
type connectResponseTap struct {
	net.Conn
	onSession func(SessionCredentials)
	onRead    func()
	handshake time.Duration

	mu   sync.Mutex
	buf  []byte
	done bool
}

func (t *connectResponseTap) SetDeadline(d time.Time) error {
	return t.Conn.SetDeadline(t.capDeadline(d))
}

func (t *connectResponseTap) SetReadDeadline(d time.Time) error {
	return t.Conn.SetReadDeadline(t.capDeadline(d))
}

func (t *connectResponseTap) SetWriteDeadline(d time.Time) error {
	return t.Conn.SetWriteDeadline(t.capDeadline(d))
}

// capDeadline is d, or handshake from now when that is sooner and the
// handshake is still under way. Clearing a deadline (the zero time) is
// left alone: go-zookeeper clears each one right after its read or write.
func (t *connectResponseTap) capDeadline(d time.Time) time.Time {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	if done || t.handshake <= 0 || d.IsZero() {
		return d
	}
	if limit := time.Now().Add(t.handshake); d.After(limit) {
		return limit
	}
	return d
}

func (t *connectResponseTap) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if n > 0 {
		if t.onRead != nil {
			t.onRead()
		}
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
	if cred, ok := decodeConnectResponse(frame); ok && t.onSession != nil {
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

// HandshakeDialer is the dialer Dial uses, for other go-zookeeper clients
// (the test harness's): it gives up on a handshake the server does not
// answer within a third of sessionTimeout.
func HandshakeDialer(sessionTimeout time.Duration) func(network, address string, timeout time.Duration) (net.Conn, error) {
	return credentialDialer(nil, nil, handshakeTimeout(sessionTimeout))
}
