package protocol

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A client that authenticates with SaslHandshake v1 and SaslAuthenticate
// (every served version) is served afterwards as "User:<id>"; before, only
// ApiVersions reaches the handler, as User:ANONYMOUS.
func TestSASLAuthenticateThenServe(t *testing.T) {
	for _, authV := range []int16{0, 1, 2} {
		t.Run(fmt.Sprintf("SaslAuthenticate_v%d", authV), func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
			c := dial(t, as.addr)
			req := apiVersionsAt(3)
			c.send(1, req)
			if _, r := c.recv(req); r.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
				t.Fatalf("ApiVersions before authentication: error %d", r.(*kmsg.ApiVersionsResponse).ErrorCode)
			}
			hs := c.handshake(2, 1, "PLAIN")
			if hs.ErrorCode != 0 || !slices.Equal(hs.SupportedMechanisms, []string{"PLAIN", "MULTI"}) {
				t.Fatalf("SaslHandshake: error %d, mechanisms %v", hs.ErrorCode, hs.SupportedMechanisms)
			}
			resp := c.authenticate(3, authV, plainToken("alice", "alice-secret"))
			if resp.ErrorCode != 0 || resp.ErrorMessage != nil || len(resp.SASLAuthBytes) != 0 {
				t.Fatalf("SaslAuthenticate: error %d %q, %d reply bytes", resp.ErrorCode, errText(resp.ErrorMessage), len(resp.SASLAuthBytes))
			}
			if resp.SessionLifetimeMillis != 0 {
				t.Fatalf("session lifetime %d without connections.max.reauth.ms", resp.SessionLifetimeMillis)
			}
			c.metadata(4)

			rs := as.h.handled()
			if keys := as.h.handledKeys(); !slices.Equal(keys, []int16{apiVersionsKey, 3}) {
				t.Fatalf("handler saw keys %v, want ApiVersions then Metadata only", keys)
			}
			if rs[0].principal != Anonymous || rs[1].principal != "User:alice" {
				t.Fatalf("principals %q then %q; want %q then User:alice", rs[0].principal, rs[1].principal, Anonymous)
			}
			as.wantCounts(t, authCounts{ok: 1})
			c.nc.Close()
			if info := as.waitConnClosed(t); info.Principal() != "User:alice" {
				t.Fatalf("ConnInfo.Principal() = %q after authentication", info.Principal())
			}
		})
	}
}

// ApiVersions is optional: a client may open with SaslHandshake.
func TestSASLHandshakeFirst(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
	c := dial(t, as.addr)
	c.loginPlain(1, 1, "bob", "bob-secret")
	c.metadata(3)
	if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:bob"}) {
		t.Fatalf("Metadata principals %v", got)
	}
}

// Each round of a multi-step mechanism is one SaslAuthenticate; the
// server's replies come back in SASLAuthBytes and the principal is set
// only once the last round completes.
func TestSASLMultiRoundAuthenticate(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
	c := dial(t, as.addr)
	if hs := c.handshake(1, 1, "MULTI"); hs.ErrorCode != 0 {
		t.Fatalf("SaslHandshake error %d", hs.ErrorCode)
	}
	rounds := []struct{ token, reply string }{
		{"alice", "challenge:alice"},
		{"proof:alice-secret", "verifier"},
		{"ack", "welcome:alice"},
	}
	for i, r := range rounds {
		resp := c.authenticate(int32(10+i), 2, []byte(r.token))
		if resp.ErrorCode != 0 || string(resp.SASLAuthBytes) != r.reply {
			t.Fatalf("round %d: error %d %q, reply %q; want %q", i, resp.ErrorCode, errText(resp.ErrorMessage), resp.SASLAuthBytes, r.reply)
		}
		if i < len(rounds)-1 && as.counts(t).ok != 0 {
			t.Fatalf("counted an authentication after round %d of %d", i, len(rounds))
		}
	}
	c.metadata(20)
	if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:alice"}) {
		t.Fatalf("Metadata principals %v", got)
	}
	as.wantCounts(t, authCounts{ok: 1})
}

// Before authentication only ApiVersions and SaslHandshake are served, and
// during the exchange only SaslAuthenticate: anything else closes the
// connection without an answer and never reaches the handler.
func TestSASLStageRules(t *testing.T) {
	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 3
	sasl := kmsg.NewPtrSASLAuthenticateRequest()
	sasl.Version = 1
	sasl.SASLAuthBytes = plainToken("alice", "alice-secret")
	handshake := kmsg.NewPtrSASLHandshakeRequest()
	handshake.Version = 1
	handshake.Mechanism = "PLAIN"
	for _, tc := range []struct {
		name string
		// before runs the allowed part of the exchange.
		before func(c *client)
		bad    kmsg.Request
		// countsFailure: the request is refused before authentication, a
		// failed authentication.
		countsFailure bool
	}{
		{"Metadata first", func(*client) {}, metadataReq(), true},
		{"Produce first", func(*client) {}, produce, true},
		{"SaslAuthenticate before SaslHandshake", func(*client) {}, sasl, true},
		{"Metadata after ApiVersions", func(c *client) {
			req := apiVersionsAt(3)
			c.send(1, req)
			c.recv(req)
		}, metadataReq(), true},
		{"Metadata instead of SaslAuthenticate", func(c *client) { c.handshake(1, 1, "PLAIN") }, metadataReq(), true},
		{"ApiVersions instead of SaslAuthenticate", func(c *client) { c.handshake(1, 1, "PLAIN") }, apiVersionsAt(3), true},
		{"SaslHandshake twice", func(c *client) { c.handshake(1, 1, "PLAIN") }, handshake, true},
		{"Metadata between MULTI rounds", func(c *client) {
			c.handshake(1, 1, "MULTI")
			c.authenticate(2, 1, []byte("alice"))
		}, metadataReq(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
			c := dial(t, as.addr)
			tc.before(c)
			c.send(99, tc.bad)
			c.expectClosedWithin(5 * time.Second)
			if info := as.waitConnClosed(t); info.Principal() != Anonymous {
				t.Fatalf("closed connection's principal %q", info.Principal())
			}
			for _, r := range as.h.handled() {
				if r.key != apiVersionsKey || r.principal != Anonymous {
					t.Fatalf("handler saw %+v before authentication", r)
				}
			}
			want := authCounts{}
			if tc.countsFailure {
				want.failed = 1
			}
			as.wantCounts(t, want)
		})
	}
}

// An unknown mechanism is answered with UNSUPPORTED_SASL_MECHANISM and the
// enabled list, then the connection is closed.
func TestSASLUnsupportedMechanism(t *testing.T) {
	for _, v := range []int16{0, 1} {
		t.Run(fmt.Sprintf("SaslHandshake_v%d", v), func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
			c := dial(t, as.addr)
			hs := c.handshake(1, v, "GSSAPI")
			if hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(hs.SupportedMechanisms, []string{"PLAIN", "MULTI"}) {
				t.Fatalf("error %d, mechanisms %v; want UNSUPPORTED_SASL_MECHANISM with [PLAIN MULTI]", hs.ErrorCode, hs.SupportedMechanisms)
			}
			c.expectClosedWithin(5 * time.Second)
			as.waitConnClosed(t)
			as.wantCounts(t, authCounts{failed: 1})
			if len(as.h.handled()) != 0 {
				t.Fatalf("handler saw %v", as.h.handled())
			}
		})
	}
}

// A failed Step is answered with SASL_AUTHENTICATION_FAILED carrying the
// mechanism's error text, then the connection is closed.
func TestSASLAuthenticationFailed(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mechanism string
		tokens    []string // all but the last succeed
		authV     int16
		wantMsg   string
	}{
		{"PLAIN wrong password v0", "PLAIN", []string{"\x00alice\x00nope"}, 0, errBadCredentials.Error()},
		{"PLAIN wrong password v1", "PLAIN", []string{"\x00alice\x00nope"}, 1, errBadCredentials.Error()},
		{"PLAIN unknown user v2", "PLAIN", []string{"\x00carol\x00x"}, 2, errBadCredentials.Error()},
		{"PLAIN malformed", "PLAIN", []string{"alice"}, 2, "Invalid SASL/PLAIN response: expected 3 tokens"},
		{"PLAIN empty token", "PLAIN", []string{""}, 2, "Invalid SASL/PLAIN response: expected 3 tokens"},
		{"PLAIN other authzid", "PLAIN", []string{"bob\x00alice\x00alice-secret"}, 1, "different from username"},
		{"MULTI wrong proof in round 2", "MULTI", []string{"alice", "proof:wrong"}, 2, errBadCredentials.Error()},
		{"MULTI bad ack in round 3", "MULTI", []string{"bob", "proof:bob-secret", "nack"}, 1, "expected the client's ack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
			c := dial(t, as.addr)
			c.handshake(1, 1, tc.mechanism)
			for i, tok := range tc.tokens {
				resp := c.authenticate(int32(2+i), tc.authV, []byte(tok))
				if i < len(tc.tokens)-1 {
					if resp.ErrorCode != 0 {
						t.Fatalf("round %d failed early: %d %q", i, resp.ErrorCode, errText(resp.ErrorMessage))
					}
					continue
				}
				if resp.ErrorCode != kerr.SaslAuthenticationFailed.Code || !strings.Contains(errText(resp.ErrorMessage), tc.wantMsg) {
					t.Fatalf("error %d %q; want SASL_AUTHENTICATION_FAILED with %q", resp.ErrorCode, errText(resp.ErrorMessage), tc.wantMsg)
				}
			}
			c.expectClosedWithin(5 * time.Second)
			if info := as.waitConnClosed(t); info.Principal() != Anonymous {
				t.Fatalf("principal %q after a failed authentication", info.Principal())
			}
			as.wantCounts(t, authCounts{failed: 1})
			if len(as.h.handled()) != 0 {
				t.Fatalf("handler saw %v", as.h.handled())
			}
		})
	}
}

// After SaslHandshake v0 the tokens are bare size-prefixed frames both
// ways (Kafka before KIP-152); afterwards requests are framed again.
func TestSASLRawTokens(t *testing.T) {
	t.Run("PLAIN", func(t *testing.T) {
		as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
		c := dial(t, as.addr)
		if hs := c.handshake(1, 0, "PLAIN"); hs.ErrorCode != 0 {
			t.Fatalf("SaslHandshake v0 error %d", hs.ErrorCode)
		}
		// PLAIN has no reply: an empty frame comes back.
		if reply := c.rawToken(plainToken("alice", "alice-secret")); len(reply) != 0 {
			t.Fatalf("raw reply %q, want empty", reply)
		}
		c.metadata(2)
		c.metadata(3)
		if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:alice", "User:alice"}) {
			t.Fatalf("Metadata principals %v", got)
		}
		as.wantCounts(t, authCounts{ok: 1})
	})
	t.Run("MULTI", func(t *testing.T) {
		as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
		c := dial(t, as.addr)
		c.handshake(1, 0, "MULTI")
		for _, r := range []struct{ token, reply string }{
			{"bob", "challenge:bob"}, {"proof:bob-secret", "verifier"}, {"ack", "welcome:bob"},
		} {
			if got := c.rawToken([]byte(r.token)); string(got) != r.reply {
				t.Fatalf("token %q: reply %q, want %q", r.token, got, r.reply)
			}
		}
		c.metadata(2)
		if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:bob"}) {
			t.Fatalf("Metadata principals %v", got)
		}
	})
	// A bad raw token closes the connection without a reply: there is no
	// error field to carry one.
	for _, tc := range []struct {
		name  string
		token []byte
	}{
		{"wrong password", plainToken("alice", "wrong")},
		{"empty token", nil},
		// In the raw stage a framed request is just a bad token.
		{"a Metadata request", encodeRequest(5, nil, metadataReq())[4:]},
	} {
		t.Run("fails/"+tc.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
			c := dial(t, as.addr)
			c.handshake(1, 0, "PLAIN")
			c.write(rawFrame(tc.token))
			c.expectClosedWithin(5 * time.Second)
			as.waitConnClosed(t)
			as.wantCounts(t, authCounts{failed: 1})
			if len(as.h.handled()) != 0 {
				t.Fatalf("handler saw %v", as.h.handled())
			}
		})
	}
}

// sasl.server.max.receive.size bounds every frame until authentication
// completes, raw tokens included; then socket.request.max.bytes applies.
func TestSASLMaxReceiveSize(t *testing.T) {
	const limit = 256
	lc := saslListener("SASL_PLAINTEXT")
	lc.SASLMaxReceiveSize = limit
	longID := strings.Repeat("x", 2*limit)
	for _, tc := range []struct {
		name   string
		before func(c *client)
		frame  []byte
	}{
		{"ApiVersions", func(*client) {}, encodeRequest(1, &longID, apiVersionsAt(3))},
		{"SaslHandshake", func(*client) {}, func() []byte {
			req := kmsg.NewPtrSASLHandshakeRequest()
			req.Version = 1
			req.Mechanism = longID
			return encodeRequest(1, nil, req)
		}()},
		{"SaslAuthenticate", func(c *client) { c.handshake(1, 1, "PLAIN") }, func() []byte {
			req := kmsg.NewPtrSASLAuthenticateRequest()
			req.Version = 1
			req.SASLAuthBytes = plainToken("alice", longID)
			return encodeRequest(2, nil, req)
		}()},
		{"raw token", func(c *client) { c.handshake(1, 0, "PLAIN") }, rawFrame(plainToken("alice", longID))},
		// A size the server must not try to allocate.
		{"2GiB prefix", func(*client) {}, []byte{0x7f, 0xff, 0xff, 0xff, 0, 18}},
		{"negative prefix", func(*client) {}, []byte{0xff, 0xff, 0xff, 0xff, 0, 18}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, lc)
			c := dial(t, as.addr)
			tc.before(c)
			c.write(tc.frame)
			c.expectClosedWithin(5 * time.Second)
			as.waitConnClosed(t)
			as.wantCounts(t, authCounts{failed: 1})
			if len(as.h.handled()) != 0 {
				t.Fatalf("handler saw %v", as.h.handled())
			}
		})
	}
	t.Run("frames at the limit pass", func(t *testing.T) {
		as := startAuthServer(t, ServerConfig{}, lc)
		c := dial(t, as.addr)
		req := apiVersionsAt(3)
		frame := encodeRequest(1, nil, req)
		id := strings.Repeat("y", limit-(len(frame)-4))
		frame = encodeRequest(1, &id, req)
		if len(frame)-4 != limit {
			t.Fatalf("test frame is %d bytes, want %d", len(frame)-4, limit)
		}
		c.write(frame)
		c.recv(req)
		c.loginPlain(2, 2, "alice", "alice-secret")
		// After authentication the SASL bound no longer applies.
		big := metadataReq()
		for i := range 50 {
			big.Topics = append(big.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(fmt.Sprintf("topic-with-a-long-name-%03d", i))})
		}
		if n := len(encodeRequest(4, nil, big)); n <= 4*limit {
			t.Fatalf("post-authentication frame only %d bytes", n)
		}
		c.send(4, big)
		if corr, _ := c.recv(big); corr != 4 {
			t.Fatalf("correlation id %d", corr)
		}
		as.wantCounts(t, authCounts{ok: 1})
	})
}

// A client may pipeline its whole exchange and its first requests in one
// write: each frame is read in the stage the previous one left, and the
// answers come back in order.
func TestSASLPipelined(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
	c := dial(t, as.addr)
	id := "pipeliner"
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = "PLAIN"
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 2
	auth.SASLAuthBytes = plainToken("alice", "alice-secret")
	reqs := []kmsg.Request{apiVersionsAt(3), hs, auth}
	const n = 20
	for i := 0; i < n; i++ {
		if i%5 == 4 {
			reqs = append(reqs, apiVersionsAt(3))
		} else {
			reqs = append(reqs, metadataReq())
		}
	}
	var buf bytes.Buffer
	for i, r := range reqs {
		buf.Write(encodeRequest(int32(100+i), &id, r))
	}
	c.write(buf.Bytes())
	for i, r := range reqs {
		corr, resp := c.recv(r)
		if corr != int32(100+i) {
			t.Fatalf("response %d has correlation id %d, want %d", i, corr, 100+i)
		}
		if ec, ok := resp.(interface{ GetErrorCode() int16 }); ok && ec.GetErrorCode() != 0 {
			t.Fatalf("response %d (%T): error %d", i, resp, ec.GetErrorCode())
		}
	}
	rs := as.h.handled()
	if len(rs) != 1+n {
		t.Fatalf("handler saw %d requests, want %d", len(rs), 1+n)
	}
	for i, r := range rs[1:] {
		if r.corr != int32(103+i) || r.principal != "User:alice" {
			t.Fatalf("handled #%d: %+v; want correlation id %d as User:alice", i, r, 103+i)
		}
	}
}

// A bad connection is closed alone: authenticated connections keep being
// served and new ones still authenticate.
func TestSASLBadConnectionDoesNotAffectOthers(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
	good := dial(t, as.addr)
	good.loginPlain(1, 2, "alice", "alice-secret")

	// Each sends what gets its connection closed, reading only the
	// answers the server gives before closing.
	bad := []func(c *client){
		func(c *client) { c.send(1, metadataReq()) },
		func(c *client) { c.handshake(1, 1, "NOPE") },
		func(c *client) { c.handshake(1, 1, "PLAIN"); c.authenticate(2, 1, plainToken("alice", "x")) },
		func(c *client) { c.write([]byte{0, 0, 0, 3, 1, 2, 3}) },
		func(c *client) { c.write([]byte{0xff, 0xff, 0xff, 0xf0}) },
		func(c *client) { c.handshake(1, 0, "PLAIN"); c.write(rawFrame([]byte("junk"))) },
	}
	for i, f := range bad {
		c := dial(t, as.addr)
		f(c)
		c.expectClosedWithin(5 * time.Second)
		as.waitConnClosed(t)
		good.metadata(int32(10 + i))
	}
	fresh := dial(t, as.addr)
	fresh.loginPlain(1, 1, "bob", "bob-secret")
	fresh.metadata(3)
	good.metadata(100)
	as.wantCounts(t, authCounts{ok: 2, failed: float64(len(bad))})
	for _, r := range as.h.handled() {
		if r.key == 3 && r.principal == Anonymous {
			t.Fatalf("handler saw an unauthenticated Metadata: %+v", r)
		}
	}
}

// The exchange can be pipelined after a v0 handshake too: the frame after
// it is read as a bare token, the one after that as a request.
func TestSASLRawTokensPipelined(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
	c := dial(t, as.addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 0
	hs.Mechanism = "MULTI"
	id := "pipeliner"
	var buf bytes.Buffer
	buf.Write(encodeRequest(1, &id, hs))
	for _, tok := range []string{"alice", "proof:alice-secret", "ack"} {
		buf.Write(rawFrame([]byte(tok)))
	}
	md := metadataReq()
	buf.Write(encodeRequest(2, &id, md))
	c.write(buf.Bytes())
	if _, r := c.recv(hs); r.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("SaslHandshake error %d", r.(*kmsg.SASLHandshakeResponse).ErrorCode)
	}
	for _, want := range []string{"challenge:alice", "verifier", "welcome:alice"} {
		b, err := c.readFrame()
		if err != nil || string(b) != want {
			t.Fatalf("raw reply %q, %v; want %q", b, err, want)
		}
	}
	if corr, _ := c.recv(md); corr != 2 {
		t.Fatalf("Metadata correlation id %d", corr)
	}
	if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:alice"}) {
		t.Fatalf("Metadata principals %v", got)
	}
}

// Once authenticated, a SaslAuthenticate is an ordinary request for the
// handler to refuse, as Kafka's KafkaApis does with ILLEGAL_SASL_STATE;
// it does not reopen the exchange.
func TestSASLAuthenticateAfterAuthenticationReachesHandler(t *testing.T) {
	as := startAuthServer(t, ServerConfig{}, saslListener("SASL_PLAINTEXT"))
	c := dial(t, as.addr)
	c.loginPlain(1, 2, "alice", "alice-secret")
	c.authenticate(3, 2, plainToken("bob", "bob-secret"))
	c.metadata(4)
	rs := as.h.handled()
	if len(rs) != 2 || rs[0].key != saslAuthenticateKey || rs[0].principal != "User:alice" || rs[1].principal != "User:alice" {
		t.Fatalf("handled %+v", rs)
	}
	as.wantCounts(t, authCounts{ok: 1})
}
