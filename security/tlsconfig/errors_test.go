package tlsconfig

import (
	"strings"
	"testing"
)

// TestConfigErrors covers the checks of Kafka's createKeystore and
// createTruststore and the load failures: each error names the property to
// fix and says what is wrong with it.
func TestConfigErrors(t *testing.T) {
	p := fixture(t)
	jksServer := map[string]string{KeystoreLocation: p.file("server.jks"), KeystorePassword: "storepw"}
	pemServer := p.serverPEMProps()
	for _, c := range []struct {
		name     string
		props    map[string]string
		property string
		message  string
	}{
		// Key store property combinations.
		{"no key store on a server", map[string]string{}, KeystoreLocation, "a server needs a key store"},
		{"inline key with type JKS", merge(pemServer, KeystoreType, "JKS"), KeystoreKey, "only with ssl.keystore.type=PEM"},
		{"inline key without chain", merge(pemServer, KeystoreCertificateChain, "\x00"), KeystoreCertificateChain, "is not set"},
		{"inline key and location", merge(pemServer, KeystoreLocation, p.file("server.jks")), KeystoreLocation, "one or the other"},
		{"inline key and store password", merge(pemServer, KeystorePassword, "x"), KeystorePassword, "only ssl.key.password"},
		{"chain without key", merge(pemServer, KeystoreKey, "\x00"), KeystoreKey, "is not set"},
		{"PEM file with store password", map[string]string{KeystoreType: "PEM", KeystoreLocation: p.file("server-bundle.pem"), KeystorePassword: "x"},
			KeystorePassword, "cannot be set for a PEM key store"},
		{"password without location", map[string]string{KeystorePassword: "storepw"}, KeystoreLocation, "is not set"},
		{"location without password", map[string]string{KeystoreLocation: p.file("server.jks")}, KeystorePassword, "is not set"},
		{"unknown type", merge(jksServer, KeystoreType, "JCEKS"), KeystoreType, `unsupported key store type "JCEKS"`},
		{"pem is case sensitive", merge(jksServer, KeystoreType, "pem"), KeystoreType, `unsupported key store type "pem"`},
		// Load failures.
		{"missing file", merge(jksServer, KeystoreLocation, p.file("nope.jks")), KeystoreLocation, "does not exist"},
		{"not a store", merge(jksServer, KeystoreLocation, p.file("ca.pem")), KeystoreLocation, "neither a JKS nor a PKCS12 file"},
		{"wrong JKS password", merge(jksServer, KeystorePassword, "wrong!"), KeystorePassword, "wrong password"},
		{"wrong PKCS12 password", map[string]string{KeystoreLocation: p.file("server.p12"), KeystorePassword: "wrong!"}, KeystorePassword, "wrong password"},
		{"JKS key password missing", map[string]string{KeystoreLocation: p.file("server-keypass.jks"), KeystorePassword: "storepw"},
			KeystorePassword, "set ssl.key.password"},
		{"JKS key password wrong", map[string]string{KeystoreLocation: p.file("server-keypass.jks"), KeystorePassword: "storepw", KeyPassword: "wrong!"},
			KeyPassword, "wrong password"},
		{"PKCS12 with a different key password", map[string]string{KeystoreLocation: p.file("server.p12"), KeystorePassword: "storepw", KeyPassword: "other"},
			KeyPassword, "protected by the store password"},
		{"JKS trust store as key store", map[string]string{KeystoreLocation: p.file("trust.jks"), KeystorePassword: "storepw"},
			KeystoreLocation, "no private key entry"},
		{"PKCS12 trust store as key store", map[string]string{KeystoreLocation: p.file("trust.p12"), KeystorePassword: "storepw"},
			KeystoreLocation, "no private key entry"},
		// PEM keys.
		{"encrypted key without password", merge(pemServer, KeystoreKey, p.read(t, "server-aes256.key")), KeystoreKey, "no ssl.key.password"},
		{"wrong key password", merge(pemServer, KeystoreKey, p.read(t, "server-aes256.key"), KeyPassword, "wrong"), KeyPassword, "wrong password"},
		{"key password on a plain key", merge(pemServer, KeyPassword, "keypass"), KeyPassword, "not an encrypted PKCS#8 key"},

		{"no key entry", merge(pemServer, KeystoreKey, p.caPEM), KeystoreKey, "private key not provided"},
		{"two keys", merge(pemServer, KeystoreKey, p.serverKeyPEM+p.clientKeyPEM), KeystoreKey, "expected one private key, but found 2"},
		{"key of another certificate", merge(pemServer, KeystoreKey, p.clientKeyPEM), KeystoreCertificateChain, "does not belong"},
		{"no certificate in chain", merge(pemServer, KeystoreCertificateChain, "junk"), KeystoreCertificateChain, "at least one certificate"},
		{"broken base64", merge(pemServer, KeystoreCertificateChain, "-----BEGIN CERTIFICATE-----\nMII=B\n-----END CERTIFICATE-----"),
			KeystoreCertificateChain, "base64"},
		// Trust store property combinations and failures.
		{"inline trust certs with type JKS", merge(pemServer, TruststoreType, "JKS"), TruststoreCertificates, "only with ssl.truststore.type=PEM"},
		{"inline trust certs and location", merge(pemServer, TruststoreLocation, p.file("ca.pem")), TruststoreLocation, "one or the other"},
		{"inline trust certs and password", merge(pemServer, TruststorePassword, "x"), TruststorePassword, "cannot be set"},
		{"PEM trust file and password", merge(pemServer, TruststoreCertificates, "\x00", TruststoreLocation, p.file("ca.pem"), TruststorePassword, "x"),
			TruststorePassword, "cannot be set"},
		{"trust password without location", merge(jksServer, TruststorePassword, "storepw"), TruststoreLocation, "is not set"},
		{"missing trust file", merge(jksServer, TruststoreLocation, p.file("nope.jks")), TruststoreLocation, "does not exist"},
		{"wrong trust password", merge(jksServer, TruststoreLocation, p.file("trust.jks"), TruststorePassword, "wrong!"), TruststorePassword, "wrong password"},
		{"PKCS12 trust store needs its password", merge(jksServer, TruststoreLocation, p.file("trust.p12")), TruststorePassword, "needs a password"},
		{"openssl PKCS12 trust store", merge(jksServer, TruststoreLocation, p.file("openssl-trust.p12"), TruststorePassword, "storepw"),
			TruststoreLocation, "not marked as trusted"},
		{"no certificate in trust PEM", merge(pemServer, TruststoreCertificates, "nothing"), TruststoreCertificates, "at least one certificate"},
	} {
		_, err := Server(c.props)
		if !isPropErr(err, c.property) || !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s: %v\n  want an error on %s containing %q", c.name, err, c.property, c.message)
		}
	}
}
