package compat

import (
	"crypto/tls"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// A listener's keystore replaced without a restart, as Kafka operators
// rotate certificates (KIP-226): kafka-configs points
// listener.name.ssl.ssl.keystore.location at a new keystore, or sets the
// same path again after the file was replaced in place, and the next TLS
// connections get the new certificate. A keystore naming another broker
// is refused and the old one stays.
func TestDynamicListenerKeystore(t *testing.T) {
	pki := harness.NewPKI(t)
	dir := t.TempDir()
	keystore := filepath.Join(dir, "keystore.p12")
	copyFile(t, pki.Broker.P12, keystore)
	n := harness.StartSecureBroker(t, harness.SecureOptions{
		Listeners: []harness.Listener{{Name: "SSL", Protocol: "SSL"}},
		Overrides: []string{
			"listener.name.ssl.ssl.keystore.type=PKCS12",
			"listener.name.ssl.ssl.keystore.location=" + keystore,
			"listener.name.ssl.ssl.keystore.password=" + harness.StorePassword,
		},
	})
	served := func() *big.Int {
		t.Helper()
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", n.Listeners["SSL"], &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber
	}
	serial := func(c *harness.Cert) *big.Int {
		t.Helper()
		return c.TLS(t).Leaf.SerialNumber
	}
	alter := func(value string) (string, error) {
		_, errOut, err := harness.RunTool(t, testCtx(t, time.Minute), "kafka-configs", "--bootstrap-server", n.Addr,
			"--entity-type", "brokers", "--entity-name", "0", "--alter", "--add-config", "listener.name.ssl.ssl.keystore.location="+value)
		return errOut, err
	}
	if got := served(); got.Cmp(serial(pki.Broker)) != 0 {
		t.Fatalf("served serial %v before any change, want the static keystore's", got)
	}

	rotated := pki.ReissueBroker(t, "broker-rotated", "broker")
	next := filepath.Join(dir, "keystore-2.p12")
	copyFile(t, rotated.P12, next)
	if errOut, err := alter(next); err != nil {
		t.Fatalf("new keystore location: %v\n%s", err, errOut)
	}
	if got := served(); got.Cmp(serial(rotated)) != 0 {
		t.Fatalf("served serial %v after the new location, want the rotated certificate's", got)
	}

	// Replaced in place, then the same value set again.
	again := pki.ReissueBroker(t, "broker-again", "broker")
	copyFile(t, again.P12, next)
	if errOut, err := alter(next); err != nil {
		t.Fatalf("same location again: %v\n%s", err, errOut)
	}
	if got := served(); got.Cmp(serial(again)) != 0 {
		t.Fatalf("served serial %v after an in-place replacement, want the new file's", got)
	}

	other := pki.ReissueBroker(t, "impostor", "impostor")
	wrong := filepath.Join(dir, "impostor.p12")
	copyFile(t, other.P12, wrong)
	if errOut, err := alter(wrong); err == nil || !strings.Contains(errOut, "Keystore DistinguishedName does not match") {
		t.Fatalf("keystore of another subject: err %v\n%s", err, tail(errOut, 2000))
	}
	if errOut, err := alter(filepath.Join(dir, "missing.p12")); err == nil || !strings.Contains(errOut, "Validation of dynamic config update of SSLFactory failed") {
		t.Fatalf("missing keystore: err %v\n%s", err, tail(errOut, 2000))
	}
	if got := served(); got.Cmp(serial(again)) != 0 {
		t.Fatalf("served serial %v after refused changes, want the last good one", got)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
