package compat

import (
	"context"
	"encoding/binary"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// closeWait bounds how long a refused connection may stay open: Kafka
// closes it after connection.failed.authentication.delay.ms (100 ms).
const closeWait = 10 * time.Second

// saslMaxReceive is Kafka's sasl.server.max.receive.size default: the
// largest frame a broker reads before the client has authenticated.
const saslMaxReceive = 524288

// TestSecurityBadInput sends what a broken or hostile client sends before
// it is authenticated — wrong passwords, unknown users and mechanisms,
// foreign certificates, plaintext on a TLS port, oversized and malformed
// frames — and checks each is refused with Kafka's answer, the
// connection is closed, the broker still serves a good client on the
// same listener, and (kbroker) failed_authentication_total counts it.
func TestSecurityBadInput(t *testing.T) {
	listeners := []harness.Listener{
		{Name: "SASL_PLAINTEXT", Protocol: "SASL_PLAINTEXT"},
		{Name: "SASL_SSL", Protocol: "SASL_SSL"},
		{Name: "SSL", Protocol: "SSL"},
		{Name: "MTLS", Protocol: "SSL"},
	}
	s := startSecured(t, listeners, func(p *harness.PKI) []string {
		// The unprefixed ssl.* keys serve every TLS listener.
		o := append(p.BrokerSSL("", "PKCS12"), "listener.name.mtls.ssl.client.auth=required")
		return append(o, saslProps("SASL_PLAINTEXT", "SASL_SSL")...)
	})
	s.createScramUsers(t, "SASL_PLAINTEXT", "alice")

	good := map[string]harness.ClientAuth{
		"SASL_PLAINTEXT": s.auth("SASL_PLAINTEXT", "SCRAM-SHA-256", "alice"),
		"SASL_SSL":       s.auth("SASL_SSL", "PLAIN", "alice"),
		"SSL":            {Protocol: "SSL"},
		"MTLS":           {Protocol: "SSL", Cert: s.pki.Clients["alice"]},
	}

	cases := []struct {
		name, listener string
		// counted: Kafka counts the failure in failed-authentication-total
		// (an AuthenticationException; an undecodable request is not one).
		counted bool
		run     func(t *testing.T, w *harness.Wire)
	}{
		{"plain-wrong-password", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "PLAIN", 0)
			authenticate(t, w, []byte("\x00alice\x00wrong-secret"), kerr.SaslAuthenticationFailed.Code)
		}},
		{"plain-unknown-user", "SASL_SSL", true, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "PLAIN", 0)
			authenticate(t, w, []byte("\x00nobody\x00alice-secret"), kerr.SaslAuthenticationFailed.Code)
		}},
		{"plain-malformed-token", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "PLAIN", 0)
			authenticate(t, w, []byte("no separators at all"), kerr.SaslAuthenticationFailed.Code)
		}},
		{"scram-sha-256-wrong-password", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			scramExchange(t, w, harness.Mechanism(t, "SCRAM-SHA-256", "alice", "wrong-secret"), 2)
		}},
		{"scram-sha-512-wrong-password", "SASL_SSL", true, func(t *testing.T, w *harness.Wire) {
			scramExchange(t, w, harness.Mechanism(t, "SCRAM-SHA-512", "alice", "wrong-secret"), 2)
		}},
		{"scram-unknown-user", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			scramExchange(t, w, harness.Mechanism(t, "SCRAM-SHA-256", "nobody", "alice-secret"), 1)
		}},
		{"mechanism-gssapi", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "GSSAPI", kerr.UnsupportedSaslMechanism.Code)
		}},
		{"mechanism-foo", "SASL_SSL", true, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "FOO", kerr.UnsupportedSaslMechanism.Code)
		}},
		{"request-before-authentication", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			req := kmsg.NewPtrMetadataRequest()
			req.Version = 9
			if err := w.WriteRaw(w.AppendRequest(req), 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}},
		{"oversized-authenticate", "SASL_PLAINTEXT", true, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "PLAIN", 0)
			// The frame's size prefix alone exceeds the bound; the broker
			// must not wait for (or allocate) the rest.
			frame := binary.BigEndian.AppendUint32(nil, saslMaxReceive+1)
			frame = append(frame, make([]byte, 1024)...)
			if err := w.WriteRaw(frame, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}},
		{"malformed-authenticate-frame", "SASL_PLAINTEXT", false, func(t *testing.T, w *harness.Wire) {
			handshake(t, w, "PLAIN", 0)
			// A SaslAuthenticate v2 header, then a body whose auth bytes
			// claim 1 GiB (compact length) in a 20-byte frame.
			req := kmsg.NewPtrSASLAuthenticateRequest()
			req.Version = 2
			req.SASLAuthBytes = []byte("x")
			frame := w.AppendRequest(req)
			body := frame[:len(frame)-3] // drop auth bytes (len, 'x') and the tag buffer
			body = binary.AppendUvarint(body, 1<<30)
			body = append(body, "junk"...)
			binary.BigEndian.PutUint32(body, uint32(len(body)-4))
			if err := w.WriteRaw(body, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := failedAuthentications(t, s, c.listener)
			w := dialListener(t, s, c.listener)
			c.run(t, w)
			if _, err := w.WaitClosed(closeWait); err != nil {
				t.Fatalf("after %s: %v", c.name, err)
			}
			afterRefusal(t, s, c.listener, good[c.listener], before, c.counted)
		})
	}

	// TLS refusals: the connection must not carry a Kafka request.
	tlsCases := []struct {
		name, listener string
		cert           *harness.Cert
	}{
		{"client-cert-from-other-ca", "MTLS", s.pki.Clients["mallory"]},
		{"no-client-cert", "MTLS", nil},
	}
	for _, c := range tlsCases {
		t.Run(c.name, func(t *testing.T) {
			before := failedAuthentications(t, s, c.listener)
			w, err := harness.DialWireTLS(t, s.addr(t, c.listener), s.pki.ClientTLS(t, c.cert), 10*time.Second)
			if err == nil {
				// TLS 1.3: the refusal comes after the client's finished.
				ctx := testCtx(t, closeWait)
				if _, err = w.Request(ctx, kmsg.NewPtrApiVersionsRequest()); err == nil {
					t.Fatalf("%s: ApiVersions answered", c.name)
				}
			}
			t.Logf("%s refused: %v", c.name, err)
			a := harness.ClientAuth{Protocol: "SSL", Cert: c.cert}
			if err := pingAs(t, s, c.listener, a); err == nil {
				t.Fatalf("%s: franz-go connected", c.name)
			}
			if out, errOut, err := s.kcat(t, testCtx(t, 30*time.Second), c.listener, a, "", "-L", "-m", "3"); err == nil {
				t.Fatalf("%s: kcat -L answered:\n%s\n%s", c.name, out, errOut)
			}
			afterRefusal(t, s, c.listener, good[c.listener], before, true)
		})
	}

	t.Run("plaintext-on-ssl-port", func(t *testing.T) {
		before := failedAuthentications(t, s, "SSL")
		w := harness.DialWire(t, s.addr(t, "SSL"), 5*time.Second)
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "compat", "1"
		if err := w.WriteRaw(w.AppendRequest(req), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		got, err := w.WaitClosed(closeWait)
		if err != nil {
			t.Fatalf("plaintext ApiVersions on the SSL port: %v", err)
		}
		// At most a TLS alert record (content type 21) comes back.
		if len(got) > 0 && got[0] != 21 {
			t.Fatalf("plaintext ApiVersions on the SSL port: got %d bytes starting %x, want nothing or a TLS alert", len(got), got[:min(len(got), 8)])
		}
		afterRefusal(t, s, "SSL", good["SSL"], before, true)
	})

	t.Run("franz-go-wrong-password", func(t *testing.T) {
		for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
			a := s.auth("SASL_SSL", mech, "alice")
			a.Password = "wrong-secret"
			if err := pingAs(t, s, "SASL_SSL", a); !isKafkaError(err, kerr.SaslAuthenticationFailed) {
				t.Errorf("%s with a wrong password: %v, want SASL_AUTHENTICATION_FAILED", mech, err)
			}
		}
		if err := pingAs(t, s, "SASL_SSL", good["SASL_SSL"]); err != nil {
			t.Fatalf("good client after wrong passwords: %v", err)
		}
	})
}

// dialListener opens a raw connection to listener (TLS without a client
// certificate on a TLS listener).
func dialListener(t *testing.T, s *secured, listener string) *harness.Wire {
	t.Helper()
	if strings.HasSuffix(s.protocols[listener], "SSL") {
		w, err := harness.DialWireTLS(t, s.addr(t, listener), s.pki.ClientTLS(t, nil), 10*time.Second)
		if err != nil {
			t.Fatalf("TLS to %s: %v", listener, err)
		}
		return w
	}
	return harness.DialWire(t, s.addr(t, listener), 5*time.Second)
}

// handshake sends SaslHandshake v1 for mechanism and wants errCode; a
// refusal must list exactly the enabled mechanisms.
func handshake(t *testing.T, w *harness.Wire, mechanism string, errCode int16) {
	t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 1
	req.Mechanism = mechanism
	resp, err := w.Request(testCtx(t, 10*time.Second), req)
	if err != nil {
		t.Fatalf("SaslHandshake %s: %v", mechanism, err)
	}
	hr := resp.(*kmsg.SASLHandshakeResponse)
	if hr.ErrorCode != errCode {
		t.Fatalf("SaslHandshake %s: error %v, want %v", mechanism, kerr.ErrorForCode(hr.ErrorCode), kerr.ErrorForCode(errCode))
	}
	got := slices.Sorted(slices.Values(hr.SupportedMechanisms))
	if want := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}; !slices.Equal(got, want) {
		t.Errorf("SaslHandshake %s: mechanisms %v, want %v", mechanism, got, want)
	}
}

// authenticate sends one SaslAuthenticate v2 with token and wants
// errCode; it returns the server's token.
func authenticate(t *testing.T, w *harness.Wire, token []byte, errCode int16) []byte {
	t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = 2
	req.SASLAuthBytes = token
	resp, err := w.Request(testCtx(t, 10*time.Second), req)
	if err != nil {
		t.Fatalf("SaslAuthenticate: %v", err)
	}
	ar := resp.(*kmsg.SASLAuthenticateResponse)
	if ar.ErrorCode != errCode {
		msg := ""
		if ar.ErrorMessage != nil {
			msg = *ar.ErrorMessage
		}
		t.Fatalf("SaslAuthenticate: error %v (%q), want %v", kerr.ErrorForCode(ar.ErrorCode), msg, kerr.ErrorForCode(errCode))
	}
	if errCode != 0 && (ar.ErrorMessage == nil || *ar.ErrorMessage == "") {
		t.Errorf("SaslAuthenticate refused without an error message")
	}
	return ar.SASLAuthBytes
}

// scramExchange runs franz-go's SCRAM client over w and wants the broker
// to refuse the failAt-th SaslAuthenticate (1: the client-first message,
// 2: the client proof).
func scramExchange(t *testing.T, w *harness.Wire, m sasl.Mechanism, failAt int) {
	t.Helper()
	handshake(t, w, m.Name(), 0)
	host, _, _ := net.SplitHostPort(w.Addr)
	sess, token, err := m.Authenticate(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	for step := 1; step <= failAt; step++ {
		if step == failAt {
			authenticate(t, w, token, kerr.SaslAuthenticationFailed.Code)
			return
		}
		reply := authenticate(t, w, token, 0)
		if _, token, err = sess.Challenge(reply); err != nil {
			t.Fatalf("SCRAM step %d: %v", step, err)
		}
	}
}

// failedAuthentications is kbroker's failed_authentication_total for
// listener (0 on Kafka, whose metrics are JMX only).
func failedAuthentications(t *testing.T, s *secured, listener string) float64 {
	t.Helper()
	return listenerCounter(t, s, "failed_authentication_total", listener)
}

// listenerCounter is kbroker's kafka_server_socket_server_metrics_<name>
// for listener (0 on Kafka).
func listenerCounter(t *testing.T, s *secured, name, listener string) float64 {
	t.Helper()
	if s.node.Kafka39() {
		return 0
	}
	v, _, err := harness.ScrapeMetric(s.node.MetricsAddr, "kafka_server_socket_server_metrics_"+name,
		`listener="`+listener+`"`)
	if err != nil {
		t.Fatalf("scrape metrics: %v", err)
	}
	return v
}

// afterRefusal checks the broker still serves a good client on listener
// and, on kbroker, that the refusal was counted when Kafka counts it.
func afterRefusal(t *testing.T, s *secured, listener string, good harness.ClientAuth, before float64, counted bool) {
	t.Helper()
	if err := pingAs(t, s, listener, good); err != nil {
		t.Fatalf("good client on %s after the refusal: %v", listener, err)
	}
	if s.node.Kafka39() || !counted {
		return
	}
	// The count is taken as the connection closes; allow it a moment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		after := failedAuthentications(t, s, listener)
		if after > before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("failed_authentication_total{listener=%q} stayed %v", listener, after)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
