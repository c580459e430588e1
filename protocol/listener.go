package protocol

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
)

// Anonymous is the principal of a connection that did not authenticate:
// plaintext listeners, and TLS ones without a client certificate (Kafka's
// KafkaPrincipal.ANONYMOUS).
const Anonymous = "User:ANONYMOUS"

// ListenerConfig says how one listener's connections are secured. The zero
// value (apart from Name) is a PLAINTEXT listener.
type ListenerConfig struct {
	Name string
	// TLS, when set, wraps every connection; the handshake runs on the
	// connection's own goroutine so a slow client never holds the acceptor.
	TLS *tls.Config
	// TLSPrincipal names the principal of a TLS connection from its
	// verified state (ssl.principal.mapping.rules over the client
	// certificate's distinguished name). An error fails the connection as
	// an authentication failure. Unused on SASL listeners, where SASL
	// names the principal.
	TLSPrincipal func(tls.ConnectionState) (string, error)
	// SASL, when set, makes every connection authenticate with SASL before
	// any request other than ApiVersions is served.
	SASL SASLMechanisms
	// ReauthMax is connections.max.reauth.ms (KIP-368): a SASL session
	// lasts this long; zero means forever.
	ReauthMax time.Duration
	// SASLMaxReceiveSize bounds every frame before authentication
	// completes (sasl.server.max.receive.size).
	SASLMaxReceiveSize int
	// HandshakeTimeout bounds the TLS handshake; zero means the idle
	// timeout.
	HandshakeTimeout time.Duration
}

// SASLServer is one authentication exchange of one mechanism, driven by
// the client's tokens.
type SASLServer interface {
	Mechanism() string
	// Step takes one client token and returns the reply. done reports the
	// exchange finished successfully; an error fails it, and its text is
	// what the client is told.
	Step(token []byte) (reply []byte, done bool, err error)
	// AuthorizationID is the authenticated user once done.
	AuthorizationID() string
}

// SASLMechanisms is a listener's enabled mechanisms.
type SASLMechanisms interface {
	// Mechanisms lists the enabled mechanisms in the order the listener's
	// configuration names them.
	Mechanisms() []string
	// New starts an exchange; false for a mechanism that is not enabled.
	New(mechanism string) (SASLServer, bool)
}

// ConnInfo identifies the connection a request arrived on.
type ConnInfo struct {
	ID         uint64
	Listener   string
	LocalAddr  net.Addr
	RemoteAddr net.Addr
	// Internal marks requests the broker makes to itself (the controller
	// on this broker reaching its own replica manager): they carry the
	// broker's own authority.
	Internal bool

	principal atomic.Pointer[string]
}

// Principal is who the connection authenticated as, "User:ANONYMOUS"
// until (or unless) it authenticates.
func (c *ConnInfo) Principal() string {
	if p := c.principal.Load(); p != nil {
		return *p
	}
	return Anonymous
}

// SetPrincipal records who the connection authenticated as.
func (c *ConnInfo) SetPrincipal(p string) { c.principal.Store(&p) }

// Host is the client's address as ACL host entries name it: the IP
// without the port.
func (c *ConnInfo) Host() string {
	if c.RemoteAddr == nil {
		return ""
	}
	return ipOf(c.RemoteAddr)
}

// tlsHandshake completes the TLS handshake and names the principal of an
// SSL listener's connection. A failure is an authentication failure, as
// Kafka counts it; false closes the connection.
func (c *conn) tlsHandshake(tc *tls.Conn) bool {
	timeout := c.lc.HandshakeTimeout
	if timeout <= 0 {
		timeout = c.srv.cfg.IdleTimeout
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.counters.authFailed(false)
		c.log.Info("closing connection: TLS handshake failed", "err", err)
		return false
	}
	if c.sasl == nil && c.lc.TLSPrincipal != nil {
		p, err := c.lc.TLSPrincipal(tc.ConnectionState())
		if err != nil {
			c.counters.authFailed(false)
			c.log.Warn("closing connection: no principal for the client certificate", "err", err)
			return false
		}
		c.info.SetPrincipal(p)
	}
	if c.sasl == nil {
		// On an SSL listener the handshake is the authentication.
		c.counters.authSucceeded(false, false)
	}
	c.touch()
	return true
}
