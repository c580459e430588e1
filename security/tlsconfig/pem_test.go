package tlsconfig

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
)

// TestPEMParsing feeds the PEM reader the shapes Kafka's
// DefaultSslEngineFactoryTest does (openssl "Bag Attributes" preambles,
// CRLF line ends, blank lines around), plus the one-line form a properties
// file forces.
func TestPEMParsing(t *testing.T) {
	p := fixture(t)
	block, _ := pem.Decode([]byte(p.caPEM))
	want := block.Bytes
	oneLine := strings.Join(strings.Fields(p.caPEM), " ")
	bag := "Bag Attributes\n    friendlyName: ca\nsubject=/CN=Test CA\nissuer=/CN=Test CA\n" + p.caPEM
	headers := strings.Replace(p.caPEM, "-----\n", "-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: none\n\n", 1)
	for name, text := range map[string]string{
		"plain":                  p.caPEM,
		"no final newline":       strings.TrimSuffix(p.caPEM, "\n"),
		"one line":               oneLine,
		"bag attributes":         bag,
		"CRLF":                   strings.ReplaceAll(p.caPEM, "\n", "\r\n"),
		"blank lines around":     "\n\n" + p.caPEM + "\n\n",
		"header lines":           headers,
		"TRUSTED CERTIFICATE":    strings.ReplaceAll(p.caPEM, "CERTIFICATE", "TRUSTED CERTIFICATE"),
		"base64 without padding": strings.ReplaceAll(p.caPEM, "=", ""),
	} {
		ders, err := certificateParser.entries(text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(ders) != 1 || !bytes.Equal(ders[0], want) {
			t.Errorf("%s: got %d entries", name, len(ders))
		}
	}
	two, err := certificateParser.entries(p.serverPEM)
	if err != nil || len(two) != 2 {
		t.Errorf("chain: %d entries, %v", len(two), err)
	}
	keys, err := privateKeyParser.entries(p.read(t, "server-aes256.key") + p.serverKeyPEM)
	if err != nil || len(keys) != 2 || !isEncryptedPKCS8(keys[0]) || isEncryptedPKCS8(keys[1]) {
		t.Errorf("keys: %d entries, %v", len(keys), err)
	}
	// A key and a certificate written on one line each still make a
	// working config. (Two certificates on one line do not, in Kafka
	// either: the greedy ".*" after BEGIN runs to the last CERTIFICATE on
	// the line, so only the last entry is found.)
	leaf := p.serverPEM[:strings.Index(p.serverPEM, "-----END CERTIFICATE-----")+len("-----END CERTIFICATE-----")]
	cfg, err := Server(map[string]string{
		KeystoreType: "PEM", KeystoreKey: strings.Join(strings.Fields(p.serverKeyPEM), " "),
		KeystoreCertificateChain: strings.Join(strings.Fields(leaf), " "),
	})
	if err != nil || len(cfg.Certificates) != 1 || len(cfg.Certificates[0].Certificate) != 1 {
		t.Fatalf("one-line PEM config: %v", err)
	}
	if _, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err != nil {
		t.Fatal(err)
	}
	two, err = certificateParser.entries(strings.Join(strings.Fields(p.serverPEM), " "))
	if err != nil || len(two) != 1 {
		t.Errorf("two certificates on one line: %d entries, %v; Kafka finds 1", len(two), err)
	}
}
