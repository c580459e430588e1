package protocol

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// testCA is a certificate authority made for one test run.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(cn string) (*testCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"kbroker tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}, nil
}

var serials struct {
	sync.Mutex
	next int64
}

// issue signs a leaf certificate: a server one for 127.0.0.1, or a client
// one whose Subject names cn.
func (ca *testCA) issue(cn string, server bool) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serials.Lock()
	serials.next++
	serial := serials.next + 1
	serials.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"kbroker tests"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// testPKI: the broker's CA with a server and a client certificate, and a
// foreign CA with a client certificate the broker must not trust.
type testPKI struct {
	ca, foreign           *testCA
	server, client, rogue tls.Certificate
}

var pki = sync.OnceValues(func() (*testPKI, error) {
	p := &testPKI{}
	var err error
	if p.ca, err = newTestCA("kbroker test CA"); err != nil {
		return nil, err
	}
	if p.foreign, err = newTestCA("foreign CA"); err != nil {
		return nil, err
	}
	if p.server, err = p.ca.issue("broker-0", true); err != nil {
		return nil, err
	}
	if p.client, err = p.ca.issue("alice-client", false); err != nil {
		return nil, err
	}
	if p.rogue, err = p.foreign.issue("mallory", false); err != nil {
		return nil, err
	}
	return p, nil
})

func getPKI(t *testing.T) *testPKI {
	t.Helper()
	p, err := pki()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cnPrincipal names a TLS connection's principal after its client
// certificate's common name.
func cnPrincipal(cs tls.ConnectionState) (string, error) {
	if len(cs.PeerCertificates) == 0 {
		return Anonymous, nil
	}
	return "User:" + cs.PeerCertificates[0].Subject.CommonName, nil
}

func sslListener(p *testPKI, auth tls.ClientAuthType) ListenerConfig {
	return ListenerConfig{
		Name: "SSL",
		TLS: &tls.Config{
			Certificates: []tls.Certificate{p.server},
			ClientCAs:    p.ca.pool,
			ClientAuth:   auth,
			MinVersion:   tls.VersionTLS12,
		},
		TLSPrincipal:     cnPrincipal,
		HandshakeTimeout: 5 * time.Second,
	}
}

func clientTLS(p *testPKI, cert *tls.Certificate, version uint16) *tls.Config {
	cfg := &tls.Config{RootCAs: p.ca.pool, ServerName: "127.0.0.1", MinVersion: version, MaxVersion: version}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return cfg
}

// dialTLS connects and completes the handshake; the error is the
// handshake's.
func dialTLS(t *testing.T, addr string, cfg *tls.Config) (*client, error) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	tc := tls.Client(nc, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return &client{t: t, nc: tc}, nil
}

func mustDialTLS(t *testing.T, addr string, cfg *tls.Config) *client {
	t.Helper()
	c, err := dialTLS(t, addr, cfg)
	if err != nil {
		t.Fatalf("TLS handshake: %v", err)
	}
	return c
}

var tlsVersions = []struct {
	name    string
	version uint16
}{{"TLS1.2", tls.VersionTLS12}, {"TLS1.3", tls.VersionTLS13}}

// A TLS client with a certificate from the broker's CA is served, as the
// principal TLSPrincipal names from its certificate; the handshake is the
// authentication.
func TestTLSListenerServes(t *testing.T) {
	p := getPKI(t)
	for _, v := range tlsVersions {
		t.Run(v.name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, sslListener(p, tls.RequireAndVerifyClientCert))
			c := mustDialTLS(t, as.addr, clientTLS(p, &p.client, v.version))
			req := apiVersionsAt(3)
			c.send(1, req)
			if _, r := c.recv(req); r.(*kmsg.ApiVersionsResponse).ErrorCode != 0 {
				t.Fatalf("ApiVersions error %d", r.(*kmsg.ApiVersionsResponse).ErrorCode)
			}
			for i := range 5 {
				c.metadata(int32(2 + i))
			}
			for _, r := range as.h.handled() {
				if r.principal != "User:alice-client" {
					t.Fatalf("handled %+v; want principal User:alice-client", r)
				}
			}
			if n := len(as.h.handled()); n != 6 {
				t.Fatalf("handler saw %d requests, want 6", n)
			}
			as.wantCounts(t, authCounts{ok: 1})
			c.nc.Close()
			if info := as.waitConnClosed(t); info.Principal() != "User:alice-client" {
				t.Fatalf("ConnInfo.Principal() = %q", info.Principal())
			}
		})
	}
}

// Without a client certificate the connection stays User:ANONYMOUS.
func TestTLSListenerWithoutClientCert(t *testing.T) {
	p := getPKI(t)
	for _, tc := range []struct {
		name      string
		auth      tls.ClientAuthType
		principal func(tls.ConnectionState) (string, error)
	}{
		{"no client auth, no principal builder", tls.NoClientCert, nil},
		{"optional client cert", tls.VerifyClientCertIfGiven, cnPrincipal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := sslListener(p, tc.auth)
			lc.TLSPrincipal = tc.principal
			as := startAuthServer(t, ServerConfig{}, lc)
			c := mustDialTLS(t, as.addr, clientTLS(p, nil, tls.VersionTLS13))
			c.metadata(1)
			if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{Anonymous}) {
				t.Fatalf("principals %v", got)
			}
			as.wantCounts(t, authCounts{ok: 1})
		})
	}
}

// Large responses, including a Frame written straight to the connection,
// go through TLS intact.
func TestTLSListenerLargeAndFrameResponses(t *testing.T) {
	p := getPKI(t)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	as := startAuthServer(t, ServerConfig{}, sslListener(p, tls.RequireAndVerifyClientCert), func(h *authHandler) {
		h.onHandle = func(_ context.Context, req *Request) Response {
			if req.Key == 0 {
				return Response{Frame: bytesFrame(payload)}
			}
			resp := kmsg.NewPtrMetadataResponse()
			for i := range 2000 {
				resp.Topics = append(resp.Topics, kmsg.MetadataResponseTopic{Topic: kmsg.StringPtr(fmt.Sprintf("topic-%05d", i))})
			}
			return Response{Msg: resp}
		}
	})
	c := mustDialTLS(t, as.addr, clientTLS(p, &p.client, tls.VersionTLS13))
	md := metadataReq()
	c.send(1, md)
	if _, r := c.recv(md); len(r.(*kmsg.MetadataResponse).Topics) != 2000 {
		t.Fatalf("%d topics", len(r.(*kmsg.MetadataResponse).Topics))
	}
	prod := kmsg.NewPtrProduceRequest()
	prod.Version = 3
	c.send(2, prod)
	b, err := c.readFrame()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4+len(payload) || !bytes.Equal(b[4:], payload) {
		t.Fatalf("Frame response: %d bytes, want %d", len(b), 4+len(payload))
	}
	c.metadata(3)
}

// A plaintext Kafka client on a TLS port fails the handshake: the
// connection is closed, counted as a failed authentication, and the
// listener keeps serving TLS clients.
func TestTLSListenerPlaintextClient(t *testing.T) {
	p := getPKI(t)
	for _, lc := range []ListenerConfig{
		sslListener(p, tls.RequireAndVerifyClientCert),
		func() ListenerConfig {
			lc := sslListener(p, tls.NoClientCert)
			lc.Name = "SASL_SSL"
			lc.SASL = newTestMechanisms()
			return lc
		}(),
	} {
		t.Run(lc.Name, func(t *testing.T) {
			as := startAuthServer(t, ServerConfig{}, lc)
			for i := range 3 {
				c := dial(t, as.addr)
				c.send(int32(i), apiVersionsAt(3))
				c.expectClosed()
				as.waitConnClosed(t)
			}
			as.wantCounts(t, authCounts{failed: 3})
			if len(as.h.handled()) != 0 {
				t.Fatalf("handler saw %v", as.h.handled())
			}
			if !logContains(as, "TLS handshake failed") {
				t.Fatal("the failed handshake was not logged")
			}
			c := mustDialTLS(t, as.addr, clientTLS(p, &p.client, tls.VersionTLS13))
			req := apiVersionsAt(3)
			c.send(9, req)
			if corr, _ := c.recv(req); corr != 9 {
				t.Fatalf("correlation id %d", corr)
			}
		})
	}
}

// tlsRefused asserts the broker refused a TLS client: either the handshake
// fails on the client, or (TLS 1.3, where the client finishes first) the
// first read does. Nothing reaches the handler.
func tlsRefused(t *testing.T, as *authServer, cfg *tls.Config) {
	t.Helper()
	c, err := dialTLS(t, as.addr, cfg)
	if err == nil {
		req := apiVersionsAt(3)
		id := "refused"
		if err := c.nc.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		// The write may fail already; the read must.
		_, _ = c.nc.Write(encodeRequest(1, &id, req))
		_, err = c.readFrame()
		var ne net.Error
		if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("refused client read %v; want the connection closed", err)
		}
	}
	as.waitConnClosed(t)
	if len(as.h.handled()) != 0 {
		t.Fatalf("handler saw %v", as.h.handled())
	}
}

// RequireAndVerifyClientCert refuses a certificate from another CA and a
// client with none; the failure is counted.
func TestTLSListenerRefusesClientCert(t *testing.T) {
	p := getPKI(t)
	for _, v := range tlsVersions {
		for _, tc := range []struct {
			name string
			cert *tls.Certificate
		}{{"foreign CA", &p.rogue}, {"no certificate", nil}} {
			t.Run(v.name+"/"+tc.name, func(t *testing.T) {
				as := startAuthServer(t, ServerConfig{}, sslListener(p, tls.RequireAndVerifyClientCert))
				tlsRefused(t, as, clientTLS(p, tc.cert, v.version))
				as.wantCounts(t, authCounts{failed: 1})
				// The listener still serves trusted clients.
				mustDialTLS(t, as.addr, clientTLS(p, &p.client, v.version)).metadata(1)
				as.wantCounts(t, authCounts{ok: 1, failed: 1})
			})
		}
	}
}

// A principal builder error fails the connection as an authentication
// failure.
func TestTLSPrincipalError(t *testing.T) {
	p := getPKI(t)
	lc := sslListener(p, tls.RequireAndVerifyClientCert)
	lc.TLSPrincipal = func(cs tls.ConnectionState) (string, error) {
		if cs.PeerCertificates[0].Subject.CommonName == "alice-client" {
			return "", errors.New("no ssl.principal.mapping.rules rule matches")
		}
		return cnPrincipal(cs)
	}
	as := startAuthServer(t, ServerConfig{}, lc)
	c := mustDialTLS(t, as.addr, clientTLS(p, &p.client, tls.VersionTLS13))
	c.send(1, apiVersionsAt(3))
	c.expectClosed()
	as.waitConnClosed(t)
	as.wantCounts(t, authCounts{failed: 1})
	if len(as.h.handled()) != 0 {
		t.Fatalf("handler saw %v", as.h.handled())
	}
}

// A client that never completes the handshake is closed after
// HandshakeTimeout, and meanwhile the listener accepts and serves others:
// the handshake runs on the connection's goroutine, not the acceptor's.
func TestTLSHandshakeTimeout(t *testing.T) {
	p := getPKI(t)
	lc := sslListener(p, tls.RequireAndVerifyClientCert)
	lc.HandshakeTimeout = 300 * time.Millisecond
	as := startAuthServer(t, ServerConfig{}, lc)
	start := time.Now()
	silent := dial(t, as.addr)
	// A partial ClientHello record header: the handshake waits for more.
	silent.write([]byte{0x16, 0x03, 0x01})
	mustDialTLS(t, as.addr, clientTLS(p, &p.client, tls.VersionTLS13)).metadata(1)
	silent.expectClosedWithin(5 * time.Second)
	if took := time.Since(start); took < lc.HandshakeTimeout {
		t.Fatalf("stalled handshake closed after %s, before the %s timeout", took, lc.HandshakeTimeout)
	}
	as.waitConnClosed(t)
	as.wantCounts(t, authCounts{ok: 1, failed: 1})
}

// The idle timeout bounds the handshake when HandshakeTimeout is not set.
func TestTLSHandshakeIdleTimeout(t *testing.T) {
	p := getPKI(t)
	lc := sslListener(p, tls.RequireAndVerifyClientCert)
	lc.HandshakeTimeout = 0
	as := startAuthServer(t, ServerConfig{IdleTimeout: 300 * time.Millisecond}, lc)
	silent := dial(t, as.addr)
	silent.expectClosedWithin(5 * time.Second)
	as.wantCounts(t, authCounts{failed: 1})
}

// SASL_SSL: TLS first, then the SASL exchange, which names the principal
// (not the client certificate) and is the one authentication counted.
func TestSASLOverTLS(t *testing.T) {
	p := getPKI(t)
	lc := sslListener(p, tls.VerifyClientCertIfGiven)
	lc.Name = "SASL_SSL"
	lc.SASL = newTestMechanisms()
	lc.ReauthMax = time.Minute
	as := startAuthServer(t, ServerConfig{}, lc)

	// Before SASL, only ApiVersions is served, even with a certificate.
	pre := mustDialTLS(t, as.addr, clientTLS(p, &p.client, tls.VersionTLS13))
	req := apiVersionsAt(3)
	pre.send(1, req)
	pre.recv(req)
	pre.send(2, metadataReq())
	pre.expectClosed()
	as.waitConnClosed(t)
	if got := principalsOf(as.h.handled(), apiVersionsKey); !slices.Equal(got, []string{Anonymous}) {
		t.Fatalf("ApiVersions principals %v; SASL_SSL must not take the certificate's", got)
	}

	for _, v := range tlsVersions {
		c := mustDialTLS(t, as.addr, clientTLS(p, &p.client, v.version))
		if got := c.loginPlain(1, 2, "alice", "alice-secret").SessionLifetimeMillis; got != time.Minute.Milliseconds() {
			t.Fatalf("session lifetime %d", got)
		}
		c.metadata(3)
		c.loginPlain(4, 2, "alice", "alice-secret")
		c.metadata(6)
	}
	mc := mustDialTLS(t, as.addr, clientTLS(p, nil, tls.VersionTLS13))
	mc.loginMulti(1, "bob")
	mc.metadata(5)
	if got := principalsOf(as.h.handled(), 3); !slices.Equal(got, []string{"User:alice", "User:alice", "User:alice", "User:alice", "User:bob"}) {
		t.Fatalf("Metadata principals %v", got)
	}
	as.wantCounts(t, authCounts{ok: 3, failed: 1, reauthOK: 2})
}
