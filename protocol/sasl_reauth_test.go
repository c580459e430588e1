package protocol

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func reauthListener(max time.Duration) ListenerConfig {
	lc := saslListener("SASL_PLAINTEXT")
	lc.ReauthMax = max
	return lc
}

// loginMulti runs the three MULTI rounds with SaslAuthenticate v2.
func (c *client) loginMulti(corr int32, user string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	if hs := c.handshake(corr, 1, "MULTI"); hs.ErrorCode != 0 {
		c.t.Fatalf("SaslHandshake error %d", hs.ErrorCode)
	}
	var resp *kmsg.SASLAuthenticateResponse
	for i, tok := range []string{user, "proof:" + testUsers[user], "ack"} {
		resp = c.authenticate(corr+1+int32(i), 2, []byte(tok))
		if resp.ErrorCode != 0 {
			c.t.Fatalf("MULTI round %d: error %d %q", i, resp.ErrorCode, errText(resp.ErrorMessage))
		}
	}
	return resp
}

// KIP-368: an authenticated client re-authenticates with SaslHandshake v1
// and SaslAuthenticate; the same principal over the same mechanism keeps
// the connection, and each success announces the session lifetime.
func TestSASLReauthenticateSamePrincipal(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reauthMax time.Duration
		login     func(c *client, corr int32) *kmsg.SASLAuthenticateResponse
	}{
		{"PLAIN", 10 * time.Second, func(c *client, corr int32) *kmsg.SASLAuthenticateResponse {
			return c.loginPlain(corr, 2, "alice", "alice-secret")
		}},
		{"MULTI", 10 * time.Second, func(c *client, corr int32) *kmsg.SASLAuthenticateResponse { return c.loginMulti(corr, "alice") }},
		// A client may re-authenticate even when the broker does not ask.
		{"no reauth max", 0, func(c *client, corr int32) *kmsg.SASLAuthenticateResponse {
			return c.loginPlain(corr, 1, "alice", "alice-secret")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, reauthListener(tc.reauthMax))
			c := dial(t, as.addr)
			wantLifetime := tc.reauthMax.Milliseconds()
			if got := tc.login(c, 1).SessionLifetimeMillis; got != wantLifetime {
				t.Fatalf("session lifetime %d, want %d", got, wantLifetime)
			}
			c.metadata(10)
			for round := range 3 {
				if got := tc.login(c, int32(20+10*round)).SessionLifetimeMillis; got != wantLifetime {
					t.Fatalf("re-authentication %d: session lifetime %d, want %d", round, got, wantLifetime)
				}
				c.metadata(int32(29 + 10*round))
			}
			if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:alice", "User:alice", "User:alice", "User:alice"}) {
				t.Fatalf("Metadata principals %v", got)
			}
			if keys := as.h.handledKeys(); slices.Contains(keys, saslHandshakeKey) || slices.Contains(keys, saslAuthenticateKey) {
				t.Fatalf("handler saw the re-authentication: %v", keys)
			}
			as.wantCounts(t, authCounts{ok: 1, reauthOK: 3})
		})
	}
}

// A re-authentication that fails, changes principal or changes mechanism
// closes the connection and counts as a failed re-authentication.
func TestSASLReauthenticateFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		// reauth runs the refused re-authentication, reading the
		// answers the server gives before it closes.
		reauth func(t *testing.T, c *client)
		want   authCounts
	}{
		{"different principal", func(t *testing.T, c *client) {
			c.handshake(20, 1, "PLAIN")
			resp := c.authenticate(21, 2, plainToken("bob", "bob-secret"))
			if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || !strings.Contains(errText(resp.ErrorMessage), "Cannot change principals") {
				t.Fatalf("error %d %q; want SASL_AUTHENTICATION_FAILED about changing principals", resp.ErrorCode, errText(resp.ErrorMessage))
			}
			if len(resp.SASLAuthBytes) != 0 {
				t.Fatalf("failed answer carries %d reply bytes", len(resp.SASLAuthBytes))
			}
		}, authCounts{ok: 1, reauthFailed: 1}},
		{"different principal over MULTI", func(t *testing.T, c *client) {
			c.handshake(20, 1, "MULTI")
			c.authenticate(21, 2, []byte("bob"))
			c.authenticate(22, 2, []byte("proof:bob-secret"))
			resp := c.authenticate(23, 2, []byte("ack"))
			if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || !strings.Contains(errText(resp.ErrorMessage), "Cannot change principals") {
				t.Fatalf("error %d %q; want SASL_AUTHENTICATION_FAILED about changing principals", resp.ErrorCode, errText(resp.ErrorMessage))
			}
		}, authCounts{ok: 1, reauthFailed: 1}},
		{"different mechanism", func(t *testing.T, c *client) {
			if hs := c.handshake(20, 1, "MULTI"); hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
				t.Fatalf("SaslHandshake changing mechanism: error %d", hs.ErrorCode)
			}
		}, authCounts{ok: 1, reauthFailed: 1}},
		{"unknown mechanism", func(t *testing.T, c *client) {
			if hs := c.handshake(20, 1, "GSSAPI"); hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
				t.Fatalf("error %d", hs.ErrorCode)
			}
		}, authCounts{ok: 1, reauthFailed: 1}},
		{"wrong password", func(t *testing.T, c *client) {
			c.handshake(20, 1, "PLAIN")
			if resp := c.authenticate(21, 2, plainToken("alice", "nope")); resp.ErrorCode != kerr.SaslAuthenticationFailed.Code {
				t.Fatalf("error %d", resp.ErrorCode)
			}
		}, authCounts{ok: 1, reauthFailed: 1}},
		{"Metadata during re-authentication", func(t *testing.T, c *client) {
			c.handshake(20, 1, "PLAIN")
			c.send(21, metadataReq())
		}, authCounts{ok: 1, reauthFailed: 1}},
		// Re-authentication needs SaslAuthenticate (KIP-368): a v0
		// handshake on an authenticated connection is refused outright;
		// it was no re-authentication attempt.
		{"SaslHandshake v0", func(t *testing.T, c *client) {
			req := kmsg.NewPtrSASLHandshakeRequest()
			req.Mechanism = "PLAIN"
			c.send(20, req)
		}, authCounts{ok: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, reauthListener(time.Minute))
			c := dial(t, as.addr)
			if strings.HasSuffix(tc.name, "over MULTI") {
				c.loginMulti(1, "alice")
			} else {
				c.loginPlain(1, 2, "alice", "alice-secret")
			}
			c.metadata(10)
			tc.reauth(t, c)
			c.expectClosedWithin(5 * time.Second)
			info := as.waitConnClosed(t)
			if p := info.Principal(); p != "User:alice" {
				t.Fatalf("principal %q after a refused re-authentication", p)
			}
			if got := principalsOf(as.h.handled(), 3); len(got) != 1 {
				t.Fatalf("handler saw Metadata %d times, want once (before the re-authentication)", len(got))
			}
			as.wantCounts(t, tc.want)
		})
	}
}

// After connections.max.reauth.ms a connection that did not
// re-authenticate is closed at its next request (KIP-368); SaslHandshake
// is still served, and re-authenticating starts a new session.
func TestSASLSessionExpiry(t *testing.T) {
	const max = time.Second
	t.Run("request after expiry closes", func(t *testing.T) {
		as := startAuthServer(t, ServerConfig{}, reauthListener(max))
		c := dial(t, as.addr)
		start := time.Now()
		c.loginPlain(1, 2, "alice", "alice-secret")
		c.metadata(3)
		if time.Since(start) >= max {
			t.Fatalf("test too slow: the session expired before its first request")
		}
		time.Sleep(max + 100*time.Millisecond)
		c.send(4, metadataReq())
		c.expectClosedWithin(5 * time.Second)
		as.waitConnClosed(t)
		if got := principalsOf(as.h.handled(), 3); len(got) != 1 {
			t.Fatalf("handler saw Metadata %d times, want 1", len(got))
		}
		as.wantCounts(t, authCounts{ok: 1})
	})
	t.Run("ApiVersions after expiry closes", func(t *testing.T) {
		as := startAuthServer(t, ServerConfig{}, reauthListener(max))
		c := dial(t, as.addr)
		c.loginPlain(1, 1, "alice", "alice-secret")
		time.Sleep(max + 100*time.Millisecond)
		c.send(4, apiVersionsAt(3))
		c.expectClosedWithin(5 * time.Second)
		if len(as.h.handled()) != 0 {
			t.Fatalf("handler saw %v", as.h.handled())
		}
	})
	t.Run("re-authentication after expiry", func(t *testing.T) {
		as := startAuthServer(t, ServerConfig{}, reauthListener(max))
		c := dial(t, as.addr)
		c.loginPlain(1, 2, "alice", "alice-secret")
		time.Sleep(max + 100*time.Millisecond)
		start := time.Now()
		if got := c.loginPlain(10, 2, "alice", "alice-secret").SessionLifetimeMillis; got != max.Milliseconds() {
			t.Fatalf("session lifetime %d", got)
		}
		c.metadata(12)
		if time.Since(start) >= max {
			t.Fatalf("test too slow: the new session expired before its first request")
		}
		// The new session expires in turn.
		time.Sleep(max + 100*time.Millisecond)
		c.send(13, metadataReq())
		c.expectClosedWithin(5 * time.Second)
		if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:alice"}) {
			t.Fatalf("Metadata principals %v", got)
		}
		as.wantCounts(t, authCounts{ok: 1, reauthOK: 1})
	})
}

// Clients that cannot re-authenticate (SaslAuthenticate v0, raw tokens)
// are counted when connections.max.reauth.ms is set (KIP-368).
func TestSASLNoReauthCounted(t *testing.T) {
	for _, tc := range []struct {
		reauthMax time.Duration
		authV     int16 // -1: raw tokens after SaslHandshake v0
		want      authCounts
	}{
		{time.Minute, 0, authCounts{ok: 1, noReauth: 1}},
		{time.Minute, -1, authCounts{ok: 1, noReauth: 1}},
		{time.Minute, 1, authCounts{ok: 1}},
		{time.Minute, 2, authCounts{ok: 1}},
		{0, 0, authCounts{ok: 1}},
		{0, -1, authCounts{ok: 1}},
	} {
		t.Run(fmt.Sprintf("max=%s/v%d", tc.reauthMax, tc.authV), func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, reauthListener(tc.reauthMax))
			c := dial(t, as.addr)
			if tc.authV < 0 {
				c.handshake(1, 0, "PLAIN")
				c.rawToken(plainToken("alice", "alice-secret"))
			} else {
				resp := c.loginPlain(1, tc.authV, "alice", "alice-secret")
				// The lifetime field exists from v1 on.
				want := int64(0)
				if tc.authV >= 1 {
					want = tc.reauthMax.Milliseconds()
				}
				if resp.SessionLifetimeMillis != want {
					t.Fatalf("session lifetime %d, want %d", resp.SessionLifetimeMillis, want)
				}
			}
			c.metadata(5)
			as.wantCounts(t, tc.want)
		})
	}
}

// A client that cannot re-authenticate is still held to the session
// lifetime: KIP-368 disconnects it.
func TestSASLNoReauthClientExpires(t *testing.T) {
	const max = time.Second
	as := startAuthServer(t, ServerConfig{}, reauthListener(max))
	c := dial(t, as.addr)
	c.handshake(1, 0, "PLAIN")
	c.rawToken(plainToken("alice", "alice-secret"))
	time.Sleep(max + 100*time.Millisecond)
	c.send(2, metadataReq())
	c.expectClosedWithin(5 * time.Second)
	as.wantCounts(t, authCounts{ok: 1, noReauth: 1})
}

// The five counters as exposed, labelled by listener: each listener
// counts its own connections.
func TestAuthenticationMetricsExposition(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, reauthListener(time.Minute))
	other := listen(t)
	otherLC := saslListener("SASL_OTHER")
	served := make(chan error, 1)
	go func() { served <- as.srv.ServeListener(context.Background(), other, otherLC) }()
	t.Cleanup(func() {
		as.srv.Close()
		if err := <-served; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})

	// One SaslAuthenticate v0 login (no re-authentication possible),
	// one successful and one refused re-authentication.
	c := dial(t, as.addr)
	c.loginPlain(1, 0, "alice", "alice-secret")
	c.loginPlain(3, 2, "alice", "alice-secret")
	c.handshake(5, 1, "PLAIN")
	c.authenticate(6, 2, plainToken("bob", "bob-secret"))
	c.expectClosed()
	// Two failed logins.
	for i := range 2 {
		c := dial(t, as.addr)
		c.handshake(1, 1, "PLAIN")
		c.authenticate(2, 1, plainToken("carol", fmt.Sprint(i)))
		c.expectClosed()
	}
	// The other listener: one login, no session limit.
	o := dial(t, other.Addr().String())
	o.loginPlain(1, 1, "bob", "bob-secret")
	o.metadata(3)
	as.wantCounts(t, authCounts{ok: 1, failed: 2, reauthOK: 1, reauthFailed: 1, noReauth: 1})

	want := `
# HELP kafka_server_socket_server_metrics_failed_authentication_total Connections that failed to authenticate and were closed.
# TYPE kafka_server_socket_server_metrics_failed_authentication_total counter
kafka_server_socket_server_metrics_failed_authentication_total{listener="SASL_PLAINTEXT"} 2
# HELP kafka_server_socket_server_metrics_failed_reauthentication_total SASL re-authentications that failed.
# TYPE kafka_server_socket_server_metrics_failed_reauthentication_total counter
kafka_server_socket_server_metrics_failed_reauthentication_total{listener="SASL_PLAINTEXT"} 1
# HELP kafka_server_socket_server_metrics_successful_authentication_no_reauth_total Authentications by clients that cannot re-authenticate while connections.max.reauth.ms is set.
# TYPE kafka_server_socket_server_metrics_successful_authentication_no_reauth_total counter
kafka_server_socket_server_metrics_successful_authentication_no_reauth_total{listener="SASL_PLAINTEXT"} 1
# HELP kafka_server_socket_server_metrics_successful_authentication_total Connections that authenticated (TLS handshake on SSL listeners, SASL on SASL ones).
# TYPE kafka_server_socket_server_metrics_successful_authentication_total counter
kafka_server_socket_server_metrics_successful_authentication_total{listener="SASL_OTHER"} 1
kafka_server_socket_server_metrics_successful_authentication_total{listener="SASL_PLAINTEXT"} 1
# HELP kafka_server_socket_server_metrics_successful_reauthentication_total SASL re-authentications that succeeded (KIP-368).
# TYPE kafka_server_socket_server_metrics_successful_reauthentication_total counter
kafka_server_socket_server_metrics_successful_reauthentication_total{listener="SASL_PLAINTEXT"} 1
`
	if err := testutil.GatherAndCompare(as.reg, strings.NewReader(want), mAuthOK, mAuthFailed, mReauthOK, mReauthFailed, mNoReauth); err != nil {
		t.Fatal(err)
	}
}
