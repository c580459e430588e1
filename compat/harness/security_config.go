package harness

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ClientAuth is how a client connects to one listener: the security
// protocol, a SASL mechanism with a user and password, and optionally a
// client certificate. The same value makes a Java client's .properties
// file (the tools' --command-config, --producer.config), kcat's -X options
// and franz-go's options.
type ClientAuth struct {
	// Protocol is Kafka's security.protocol: PLAINTEXT, SSL,
	// SASL_PLAINTEXT or SASL_SSL.
	Protocol string
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (SASL only).
	Mechanism      string
	User, Password string
	// Cert is the client certificate for TLS (nil: none is presented).
	Cert *Cert
	// StoreType is the Java keystore and truststore type: PKCS12 (the
	// default), JKS or PEM.
	StoreType string
}

func (a ClientAuth) tls() bool  { return a.Protocol == "SSL" || a.Protocol == "SASL_SSL" }
func (a ClientAuth) sasl() bool { return strings.HasPrefix(a.Protocol, "SASL_") }

// JAAS is the sasl.jaas.config a Java client logs in with.
func (a ClientAuth) JAAS() string {
	module := "org.apache.kafka.common.security.plain.PlainLoginModule"
	if strings.HasPrefix(a.Mechanism, "SCRAM-") {
		module = "org.apache.kafka.common.security.scram.ScramLoginModule"
	}
	return fmt.Sprintf(`%s required username="%s" password="%s";`, module, a.User, a.Password)
}

// JavaProps writes a Java client configuration for a into a temp dir of t
// and returns its path.
func (p *PKI) JavaProps(t testing.TB, a ClientAuth) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "security.protocol=%s\n", a.Protocol)
	if a.tls() {
		switch a.StoreType {
		case "", "PKCS12":
			fmt.Fprintf(&b, "ssl.truststore.type=PKCS12\nssl.truststore.location=%s\nssl.truststore.password=%s\n", p.TruststoreP12, StorePassword)
		case "JKS":
			fmt.Fprintf(&b, "ssl.truststore.type=JKS\nssl.truststore.location=%s\nssl.truststore.password=%s\n", p.TruststoreJKS, StorePassword)
		case "PEM":
			fmt.Fprintf(&b, "ssl.truststore.type=PEM\nssl.truststore.location=%s\n", p.CAPEM)
		default:
			t.Fatalf("ClientAuth: store type %q", a.StoreType)
		}
		if a.Cert != nil {
			if a.StoreType == "JKS" && a.Cert.JKS == "" {
				t.Fatalf("ClientAuth: no JKS keystore for %s (only the broker's certificate has one)", a.Cert.Principal)
			}
			b.WriteString(keystoreProps("", a.Cert, a.StoreType))
		}
	}
	if a.sasl() {
		fmt.Fprintf(&b, "sasl.mechanism=%s\nsasl.jaas.config=%s\n", a.Mechanism, a.JAAS())
	}
	f, err := os.CreateTemp(t.TempDir(), "client-*.properties")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// KcatArgs are the -X options for librdkafka (kcat) to connect as a.
func (p *PKI) KcatArgs(a ClientAuth) []string {
	x := []string{"security.protocol=" + strings.ToLower(a.Protocol)}
	if a.tls() {
		x = append(x, "ssl.ca.location="+p.CAPEM)
		if a.Cert != nil {
			x = append(x, "ssl.certificate.location="+a.Cert.CertPEM, "ssl.key.location="+a.Cert.KeyPEM)
		}
	}
	if a.sasl() {
		x = append(x, "sasl.mechanisms="+a.Mechanism, "sasl.username="+a.User, "sasl.password="+a.Password)
	}
	var args []string
	for _, o := range x {
		args = append(args, "-X", o)
	}
	return args
}

// KgoOpts are the franz-go options to connect as a: DialTLSConfig
// trusting the test CA (and presenting a.Cert), and the SASL mechanism.
func (p *PKI) KgoOpts(t testing.TB, a ClientAuth) []kgo.Opt {
	t.Helper()
	var opts []kgo.Opt
	if a.tls() {
		opts = append(opts, kgo.DialTLSConfig(p.ClientTLS(t, a.Cert)))
	}
	if a.sasl() {
		opts = append(opts, kgo.SASL(Mechanism(t, a.Mechanism, a.User, a.Password)))
	}
	return opts
}

// ClientTLS is a Go TLS client configuration that trusts the test CA and
// presents cert (none when nil).
func (p *PKI) ClientTLS(t testing.TB, cert *Cert) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(readFile(t, p.CAPEM))) {
		t.Fatalf("PKI: no certificate in %s", p.CAPEM)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		// Always present it, as Java and librdkafka do: with Certificates,
		// Go sends none when the server's list of acceptable CAs does not
		// name the certificate's issuer, and a test of a foreign
		// certificate would test no certificate instead.
		pair := cert.TLS(t)
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return cfg
}

// Mechanism is franz-go's SASL mechanism of that name for user and pass.
func Mechanism(t testing.TB, name, user, pass string) sasl.Mechanism {
	t.Helper()
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	t.Fatalf("no SASL mechanism %q", name)
	return nil
}

// BrokerSSL are a broker's ssl.keystore.* and ssl.truststore.* settings
// for the PKI's broker certificate in storeType (PKCS12, JKS or PEM), for
// every listener when listener is "" or else as
// listener.name.<listener>.ssl.*.
func (p *PKI) BrokerSSL(listener, storeType string) []string {
	prefix := ""
	if listener != "" {
		prefix = "listener.name." + strings.ToLower(listener) + "."
	}
	lines := strings.Split(strings.TrimSpace(keystoreProps(prefix, p.Broker, storeType)), "\n")
	switch storeType {
	case "JKS":
		lines = append(lines, prefix+"ssl.truststore.type=JKS", prefix+"ssl.truststore.location="+p.TruststoreJKS, prefix+"ssl.truststore.password="+StorePassword)
	case "PEM":
		lines = append(lines, prefix+"ssl.truststore.type=PEM", prefix+"ssl.truststore.location="+p.CAPEM)
	default:
		lines = append(lines, prefix+"ssl.truststore.type=PKCS12", prefix+"ssl.truststore.location="+p.TruststoreP12, prefix+"ssl.truststore.password="+StorePassword)
	}
	return lines
}

// keystoreProps are the ssl.keystore.* lines (each prefixed) for c in
// storeType.
func keystoreProps(prefix string, c *Cert, storeType string) string {
	switch storeType {
	case "JKS":
		return fmt.Sprintf("%[1]sssl.keystore.type=JKS\n%[1]sssl.keystore.location=%[2]s\n%[1]sssl.keystore.password=%[3]s\n%[1]sssl.key.password=%[4]s\n",
			prefix, c.JKS, StorePassword, KeyPassword)
	case "PEM":
		return fmt.Sprintf("%[1]sssl.keystore.type=PEM\n%[1]sssl.keystore.location=%[2]s\n", prefix, c.PEMKeystore)
	default:
		return fmt.Sprintf("%[1]sssl.keystore.type=PKCS12\n%[1]sssl.keystore.location=%[2]s\n%[1]sssl.keystore.password=%[3]s\n",
			prefix, c.P12, StorePassword)
	}
}

// PlainJAAS is a broker's listener.name.<l>.plain.sasl.jaas.config: the
// broker logs in as user/pass (inter-broker) and accepts the users listed
// (name → password).
func PlainJAAS(user, pass string, users map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `org.apache.kafka.common.security.plain.PlainLoginModule required username="%s" password="%s"`, user, pass)
	for _, name := range sortedKeys(users) {
		fmt.Fprintf(&b, ` user_%s="%s"`, name, users[name])
	}
	b.WriteString(";")
	return b.String()
}

// ScramJAAS is a broker's listener.name.<l>.scram-sha-256.sasl.jaas.config
// (or -512): the SCRAM credentials themselves live in the metadata store.
func ScramJAAS(user, pass string) string {
	return fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, user, pass)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
