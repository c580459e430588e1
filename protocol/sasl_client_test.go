package protocol

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// A real client (franz-go) authenticates with SASL/PLAIN over
// SASL_PLAINTEXT and SASL_SSL, and re-authenticates on its own when the
// broker announces a session lifetime (KIP-368).
func TestFranzGoClientSASL(t *testing.T) {
	p := getPKI(t)
	sslSASL := sslListener(p, tls.VerifyClientCertIfGiven)
	sslSASL.Name = "SASL_SSL"
	sslSASL.SASL = newTestMechanisms()
	for _, tc := range []struct {
		name      string
		lc        ListenerConfig
		tls       *tls.Config
		reauthMax time.Duration
	}{
		{"SASL_PLAINTEXT", saslListener("SASL_PLAINTEXT"), nil, 0},
		{"SASL_SSL", sslSASL, clientTLS(p, nil, tls.VersionTLS13), 0},
		// franz-go re-authenticates at the lifetime less at least a
		// second: with 2s it does so before a request 1.3s later.
		{"SASL_PLAINTEXT re-authentication", saslListener("SASL_PLAINTEXT"), nil, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := tc.lc
			lc.ReauthMax = tc.reauthMax
			as := startAuthServer(t, ServerConfig{}, lc)
			opts := []kgo.Opt{
				kgo.SeedBrokers(as.addr),
				kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()),
				kgo.RequestRetries(0),
			}
			if tc.tls != nil {
				opts = append(opts, kgo.DialTLSConfig(tc.tls))
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			request := func() {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest()); err != nil {
					t.Fatalf("Metadata: %v", err)
				}
			}
			request()
			if tc.reauthMax > 0 {
				time.Sleep(1300 * time.Millisecond)
				request()
			}
			var metadata int
			for _, r := range as.h.handled() {
				switch {
				case r.key == 3 && r.principal != "User:alice":
					t.Fatalf("Metadata handled as %q", r.principal)
				case r.key == 3:
					metadata++
				case r.key != apiVersionsKey:
					t.Fatalf("handler saw key %d", r.key)
				}
			}
			if metadata == 0 {
				t.Fatal("no Metadata reached the handler")
			}
			got := as.counts(t)
			if got.ok < 1 || got.failed != 0 || got.reauthFailed != 0 || got.noReauth != 0 {
				t.Fatalf("counters %+v", got)
			}
			if tc.reauthMax > 0 && got.reauthOK < 1 {
				t.Fatalf("franz-go did not re-authenticate: counters %+v", got)
			}
		})
	}
}
