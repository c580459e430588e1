package protocol

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Test users of the SASL mechanisms below.
var testUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret"}

// testMechanisms is a listener's SASL mechanisms for tests, without the
// broker's security packages: "PLAIN" takes one token as SASL/PLAIN does
// (authzid NUL user NUL password), "MULTI" takes three rounds so that
// several SaslAuthenticate exchanges are exercised.
type testMechanisms struct {
	names []string
}

func newTestMechanisms() testMechanisms { return testMechanisms{names: []string{"PLAIN", "MULTI"}} }

func (m testMechanisms) Mechanisms() []string { return m.names }

func (m testMechanisms) New(mechanism string) (SASLServer, bool) {
	if !slices.Contains(m.names, mechanism) {
		return nil, false
	}
	switch mechanism {
	case "PLAIN":
		return &plainServer{}, true
	case "MULTI":
		return &multiServer{}, true
	}
	return nil, false
}

// errBadCredentials is worded as Kafka's PlainServer words it.
//
//lint:ignore ST1005 Kafka's message, capitalised as Kafka writes it
var errBadCredentials = errors.New("Authentication failed: Invalid username or password")

// plainServer is SASL/PLAIN's server side (RFC 4616): one token, no reply.
type plainServer struct {
	user string
	done bool
}

func (s *plainServer) Mechanism() string { return "PLAIN" }

func (s *plainServer) Step(token []byte) ([]byte, bool, error) {
	if s.done {
		return nil, false, errors.New("PLAIN exchange already complete")
	}
	parts := strings.Split(string(token), "\x00")
	if len(parts) != 3 {
		return nil, false, errors.New("Invalid SASL/PLAIN response: expected 3 tokens")
	}
	authzid, user, pass := parts[0], parts[1], parts[2]
	if authzid != "" && authzid != user {
		return nil, false, errors.New("Authentication failed: Client requested an authorization id that is different from username")
	}
	if want, ok := testUsers[user]; !ok || want != pass {
		return nil, false, errBadCredentials
	}
	s.user, s.done = user, true
	return nil, true, nil
}

func (s *plainServer) AuthorizationID() string { return s.user }

// multiServer is a three-round mechanism: the user name (answered with a
// challenge naming it), "proof:<password>" (answered with "verifier"),
// then "ack", which completes the exchange with the reply "welcome:<user>".
type multiServer struct {
	round int
	user  string
}

func (s *multiServer) Mechanism() string { return "MULTI" }

func (s *multiServer) Step(token []byte) ([]byte, bool, error) {
	s.round++
	switch s.round {
	case 1:
		if _, ok := testUsers[string(token)]; !ok {
			return nil, false, errBadCredentials
		}
		s.user = string(token)
		return []byte("challenge:" + s.user), false, nil
	case 2:
		if string(token) != "proof:"+testUsers[s.user] {
			return nil, false, errBadCredentials
		}
		return []byte("verifier"), false, nil
	case 3:
		if string(token) != "ack" {
			return nil, false, errors.New("MULTI: expected the client's ack")
		}
		return []byte("welcome:" + s.user), true, nil
	}
	return nil, false, errors.New("MULTI exchange already complete")
}

func (s *multiServer) AuthorizationID() string { return s.user }

func plainToken(user, pass string) []byte { return []byte("\x00" + user + "\x00" + pass) }

// handled is one request the handler saw, with the connection's principal
// at that moment.
type handled struct {
	conn      uint64
	key       int16
	corr      int32
	principal string
}

// authHandler is a fakeHandler that also serves the SASL keys' versions
// (ApiVersions lists every key it serves, as real clients need) and
// records the principal each request was handled under.
type authHandler struct {
	*fakeHandler
	mu  sync.Mutex
	log []handled
}

func newAuthHandler() *authHandler {
	fh := newFakeHandler()
	fh.versions[saslHandshakeKey] = [2]int16{0, 1}
	fh.versions[saslAuthenticateKey] = [2]int16{0, 2}
	// Tests open many failing connections; ConnClosed must never block.
	fh.closed = make(chan *ConnInfo, 1024)
	return &authHandler{fakeHandler: fh}
}

func (h *authHandler) Handle(ctx context.Context, req *Request) Response {
	h.mu.Lock()
	h.log = append(h.log, handled{conn: req.Conn.ID, key: req.Key, corr: req.CorrelationID, principal: req.Conn.Principal()})
	h.mu.Unlock()
	if req.Key == apiVersionsKey {
		resp := kmsg.NewPtrApiVersionsResponse()
		if req.RequestedVersion != req.Version {
			resp.ErrorCode = 35 // UNSUPPORTED_VERSION
		}
		keys := make([]int16, 0, len(h.versions))
		for k := range h.versions {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v := h.versions[k]
			resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: v[0], MaxVersion: v[1]})
		}
		return Response{Msg: resp}
	}
	return h.fakeHandler.Handle(ctx, req)
}

func (h *authHandler) handled() []handled {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.log)
}

// handledKeys lists the api keys the handler saw, in order.
func (h *authHandler) handledKeys() []int16 {
	var keys []int16
	for _, r := range h.handled() {
		keys = append(keys, r.key)
	}
	return keys
}

// authServer is a Server with one listener secured as lc says, and its
// own metrics registry.
type authServer struct {
	srv  *Server
	addr string
	lc   ListenerConfig
	h    *authHandler
	reg  *prometheus.Registry
	logs *syncBuffer
}

// startAuthServer serves lc; setup adjusts the handler before any
// connection can reach it.
func startAuthServer(t *testing.T, cfg ServerConfig, lc ListenerConfig, setup ...func(*authHandler)) *authServer {
	t.Helper()
	ln := listen(t)
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	logs := &syncBuffer{}
	h := newAuthHandler()
	for _, f := range setup {
		f(h)
	}
	as := &authServer{
		srv:  NewServer(cfg, h, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		addr: ln.Addr().String(),
		lc:   lc,
		h:    h,
		reg:  reg,
		logs: logs,
	}
	served := make(chan error, 1)
	go func() { served <- as.srv.ServeListener(context.Background(), ln, lc) }()
	t.Cleanup(func() {
		as.srv.Close()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("ServeListener returned %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("ServeListener did not return after Close")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return as
}

func saslListener(name string) ListenerConfig {
	return ListenerConfig{Name: name, SASL: newTestMechanisms()}
}

// The five authentication counters, by their exported names.
const (
	mAuthOK       = "kafka_server_socket_server_metrics_successful_authentication_total"
	mAuthFailed   = "kafka_server_socket_server_metrics_failed_authentication_total"
	mReauthOK     = "kafka_server_socket_server_metrics_successful_reauthentication_total"
	mReauthFailed = "kafka_server_socket_server_metrics_failed_reauthentication_total"
	mNoReauth     = "kafka_server_socket_server_metrics_successful_authentication_no_reauth_total"
)

// authCounts are the five counters of one listener.
type authCounts struct {
	ok, failed, reauthOK, reauthFailed, noReauth float64
}

// metric reads one counter of the listener from the registry; an absent
// series is zero.
func (as *authServer) metric(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := as.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "listener" && l.GetValue() == as.lc.Name {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func (as *authServer) counts(t *testing.T) authCounts {
	t.Helper()
	return authCounts{
		ok:           as.metric(t, mAuthOK),
		failed:       as.metric(t, mAuthFailed),
		reauthOK:     as.metric(t, mReauthOK),
		reauthFailed: as.metric(t, mReauthFailed),
		noReauth:     as.metric(t, mNoReauth),
	}
}

// wantCounts waits (boundedly) for the counters to read want: a closed
// connection is seen by the client a moment before its goroutine ends.
func (as *authServer) wantCounts(t *testing.T, want authCounts) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := as.counts(t)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("authentication counters of %s = %+v, want %+v", as.lc.Name, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitConnClosed waits for Handler.ConnClosed of one connection.
func (as *authServer) waitConnClosed(t *testing.T) *ConnInfo {
	t.Helper()
	select {
	case c := <-as.h.closed:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("ConnClosed was not called")
		return nil
	}
}

// handshake sends SaslHandshake at version v and returns its answer.
func (c *client) handshake(corr int32, v int16, mechanism string) *kmsg.SASLHandshakeResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = v
	req.Mechanism = mechanism
	c.send(corr, req)
	got, resp := c.recv(req)
	if got != corr {
		c.t.Fatalf("SaslHandshake answered with correlation id %d, want %d", got, corr)
	}
	return resp.(*kmsg.SASLHandshakeResponse)
}

// authenticate sends one SaslAuthenticate token at version v and returns
// its answer.
func (c *client) authenticate(corr int32, v int16, token []byte) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = v
	req.SASLAuthBytes = token
	c.send(corr, req)
	got, resp := c.recv(req)
	if got != corr {
		c.t.Fatalf("SaslAuthenticate answered with correlation id %d, want %d", got, corr)
	}
	return resp.(*kmsg.SASLAuthenticateResponse)
}

// loginPlain runs SaslHandshake v1 and one SaslAuthenticate at authV,
// failing the test unless both succeed.
func (c *client) loginPlain(corr int32, authV int16, user, pass string) *kmsg.SASLAuthenticateResponse {
	c.t.Helper()
	if hs := c.handshake(corr, 1, "PLAIN"); hs.ErrorCode != 0 {
		c.t.Fatalf("SaslHandshake error %d", hs.ErrorCode)
	}
	resp := c.authenticate(corr+1, authV, plainToken(user, pass))
	if resp.ErrorCode != 0 {
		c.t.Fatalf("SaslAuthenticate error %d: %v", resp.ErrorCode, resp.ErrorMessage)
	}
	return resp
}

// rawToken sends a bare size-prefixed token (after a SaslHandshake v0)
// and returns the bare reply.
func (c *client) rawToken(token []byte) []byte {
	c.t.Helper()
	c.write(rawFrame(token))
	reply, err := c.readFrame()
	if err != nil {
		c.t.Fatalf("reading the raw SASL reply: %v", err)
	}
	return reply
}

func rawFrame(token []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...)
}

func metadataReq() *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 4
	return req
}

// metadata sends a Metadata request and checks it is answered.
func (c *client) metadata(corr int32) {
	c.t.Helper()
	req := metadataReq()
	c.send(corr, req)
	if got, _ := c.recv(req); got != corr {
		c.t.Fatalf("Metadata answered with correlation id %d, want %d", got, corr)
	}
}

// expectClosedWithin asserts the server closes the connection before d,
// with nothing more sent.
func (c *client) expectClosedWithin(d time.Duration) {
	c.t.Helper()
	if err := c.nc.SetReadDeadline(time.Now().Add(d)); err != nil {
		c.t.Fatal(err)
	}
	var buf [1]byte
	n, err := c.nc.Read(buf[:])
	var ne net.Error
	switch {
	case n > 0:
		c.t.Fatalf("got byte %#x; want the connection closed without an answer", buf[0])
	case errors.As(err, &ne) && ne.Timeout():
		c.t.Fatalf("connection still open after %s; want it closed", d)
	case err == nil:
		c.t.Fatal("read returned nothing and no error")
	}
}

// principalsOf lists the principals the handler saw, by api key.
func principalsOf(rs []handled, key int16) []string {
	var out []string
	for _, r := range rs {
		if r.key == key {
			out = append(out, r.principal)
		}
	}
	return out
}

func errText(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// contains is bytes.Contains for the log.
func logContains(as *authServer, s string) bool {
	return bytes.Contains([]byte(as.logs.String()), []byte(s))
}
