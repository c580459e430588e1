package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// pkiTimeout bounds one openssl or keytool run; keytool is a JVM start.
const pkiTimeout = time.Minute

// Passwords of every store and key the PKI writes. The JKS keystores'
// keys have their own password, as a JKS store allows and PKCS12 does not,
// so that a test of ssl.key.password has a key it is needed for.
const (
	StorePassword = "store-secret"
	KeyPassword   = "key-secret"
)

// The subject of every certificate issued by the test CA is
// O=kbroker-test,OU=<ou>,CN=<name>, written in that order so that Java's
// X500Principal.getName() (RFC 2253: the last RDN first) and hence the
// broker's principal reads "CN=<name>,OU=<ou>,O=kbroker-test".
const pkiOrg = "kbroker-test"

// PKI is a test certificate authority and everything issued by it, in the
// forms the clients and brokers read: PKCS12 and JKS stores for Java and
// for Kafka's ssl.keystore.*, PEM files for librdkafka (kcat), and
// tls.Certificate values for franz-go.
type PKI struct {
	Dir string
	// CAPEM is the test CA's certificate; OtherCAPEM another CA's, which
	// no broker trusts.
	CAPEM, OtherCAPEM string
	// TruststoreP12 and TruststoreJKS hold CAPEM as a trusted entry
	// (password StorePassword); the PEM form is CAPEM itself.
	TruststoreP12, TruststoreJKS string
	// Broker is the brokers' certificate: CN=broker, SAN IP:127.0.0.1
	// and DNS:localhost, for server and client authentication (brokers
	// dial each other).
	Broker *Cert
	// Clients are client certificates by CN: alice and bob issued by the
	// test CA, mallory by the other CA.
	Clients map[string]*Cert
}

// Cert is one issued certificate with its key in every form.
type Cert struct {
	// Principal is the certificate's subject as Kafka's default
	// principal builder names it: "CN=alice,OU=clients,O=kbroker-test".
	Principal string
	// CertPEM holds the certificate then its CA's; KeyPEM the unencrypted
	// PKCS#8 key.
	CertPEM, KeyPEM string
	// PEMKeystore is KeyPEM and CertPEM in one file: Kafka's PEM keystore
	// (ssl.keystore.type=PEM, no ssl.key.password).
	PEMKeystore string
	// P12 is a PKCS12 keystore (password StorePassword, alias the CN);
	// JKS a JKS one (store StorePassword, key KeyPassword), made for the
	// broker's certificate only ("" for clients): each keytool run is a
	// JVM start.
	P12, JKS string
}

// TLS is the certificate for a Go client (franz-go's kgo.DialTLSConfig).
func (c *Cert) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// NewPKI writes a fresh PKI into a temp dir of t: a CA, the broker's
// certificate, clients alice and bob, and a second CA with client mallory.
// Certificates are valid for two days from now: every process that
// checks them runs on this machine's clock.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	for _, tool := range []string{"openssl", "keytool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("PKI: %s not installed: %v", tool, err)
		}
	}
	p := &PKI{Dir: t.TempDir(), Clients: map[string]*Cert{}}
	p.CAPEM = p.newCA(t, "ca", "kbroker-test-ca")
	p.OtherCAPEM = p.newCA(t, "other-ca", "unrelated-ca")
	p.Broker = p.issue(t, "ca", "broker", "brokers", "subjectAltName=IP:127.0.0.1,DNS:localhost", "rsa:2048")
	// Clients get EC keys: quicker to make, and a second key type for
	// the broker's TLS stack to verify.
	for _, name := range []string{"alice", "bob"} {
		p.Clients[name] = p.issue(t, "ca", name, "clients", "", "ec")
	}
	p.Clients["mallory"] = p.issue(t, "other-ca", "mallory", "clients", "", "ec")
	p.TruststoreP12 = p.path("truststore.p12")
	p.TruststoreJKS = p.path("truststore.jks")
	p.Broker.JKS = p.path("broker.jks")
	// The keytool runs are independent JVM starts: run them side by side.
	runs := [][]string{
		{"-importcert", "-noprompt", "-alias", "ca", "-file", p.CAPEM,
			"-keystore", p.TruststoreP12, "-storetype", "PKCS12", "-storepass", StorePassword},
		{"-importcert", "-noprompt", "-alias", "ca", "-file", p.CAPEM,
			"-keystore", p.TruststoreJKS, "-storetype", "JKS", "-storepass", StorePassword},
		{"-importkeystore", "-noprompt", "-srckeystore", p.Broker.P12, "-srcstoretype", "PKCS12",
			"-srcstorepass", StorePassword, "-srcalias", "broker", "-destkeystore", p.Broker.JKS, "-deststoretype", "JKS",
			"-deststorepass", StorePassword, "-destalias", "broker", "-destkeypass", KeyPassword},
	}
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Go(func() { errs[i] = pkiCommand("keytool", append([]string{"-J-XX:TieredStopAtLevel=1"}, args...)...) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("PKI: %v", err)
		}
	}
	return p
}

func (p *PKI) path(name string) string { return filepath.Join(p.Dir, name) }

// newCA makes a self-signed CA as <name>.pem and <name>.key.
func (p *PKI) newCA(t testing.TB, name, cn string) string {
	t.Helper()
	ext := p.path(name + ".ext")
	writeFile(t, ext, "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n")
	key, csr, cert := p.path(name+".key"), p.path(name+".csr"), p.path(name+".pem")
	p.openssl(t, "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
		"-subj", "/O="+pkiOrg+"/CN="+cn)
	p.openssl(t, "x509", "-req", "-in", csr, "-signkey", key, "-out", cert, "-days", "2", "-extfile", ext)
	return cert
}

// issue signs a certificate for CN=cn,OU=ou with the CA named ca and
// writes it in every form; san, when set, is an extension line. keyType
// is "rsa:2048" or "ec" (P-256).
func (p *PKI) issue(t testing.TB, ca, cn, ou, san, keyType string) *Cert {
	t.Helper()
	return p.issueAs(t, cn, ca, cn, ou, san, keyType)
}

// ReissueBroker issues another broker certificate, with a new key, into
// files named after file: with cn "broker" it names the same broker (a
// rotated certificate), with another cn a different one.
func (p *PKI) ReissueBroker(t testing.TB, file, cn string) *Cert {
	t.Helper()
	return p.issueAs(t, file, "ca", cn, "brokers", "subjectAltName=IP:127.0.0.1,DNS:localhost", "rsa:2048")
}

// issueAs is issue writing its files under the name file.
func (p *PKI) issueAs(t testing.TB, file, ca, cn, ou, san, keyType string) *Cert {
	t.Helper()
	usage := "digitalSignature,keyEncipherment"
	if keyType == "ec" {
		usage = "digitalSignature"
	}
	ext := "basicConstraints=CA:FALSE\nkeyUsage=critical," + usage + "\nextendedKeyUsage=serverAuth,clientAuth\n"
	if san != "" {
		ext += san + "\n"
	}
	extPath := p.path(file + ".ext")
	writeFile(t, extPath, ext)
	key, csr, leaf := p.path(file+".key"), p.path(file+".csr"), p.path(file+"-leaf.pem")
	newKey := []string{"-newkey", keyType}
	if keyType == "ec" {
		newKey = append(newKey, "-pkeyopt", "ec_paramgen_curve:prime256v1")
	}
	p.openssl(t, append(append([]string{"req", "-new"}, newKey...), "-nodes", "-keyout", key, "-out", csr,
		"-subj", fmt.Sprintf("/O=%s/OU=%s/CN=%s", pkiOrg, ou, cn))...)
	p.openssl(t, "x509", "-req", "-in", csr, "-CA", p.path(ca+".pem"), "-CAkey", p.path(ca+".key"),
		"-CAcreateserial", "-out", leaf, "-days", "2", "-extfile", extPath)
	c := &Cert{
		Principal:   fmt.Sprintf("CN=%s,OU=%s,O=%s", cn, ou, pkiOrg),
		CertPEM:     p.path(file + "-chain.pem"),
		KeyPEM:      key,
		PEMKeystore: p.path(file + "-keystore.pem"),
		P12:         p.path(file + ".p12"),
	}
	chain := readFile(t, leaf) + readFile(t, p.path(ca+".pem"))
	writeFile(t, c.CertPEM, chain)
	writeFile(t, c.PEMKeystore, readFile(t, key)+chain)
	p.openssl(t, "pkcs12", "-export", "-in", leaf, "-inkey", key, "-certfile", p.path(ca+".pem"),
		"-name", cn, "-out", c.P12, "-passout", "pass:"+StorePassword)
	return c
}

func (p *PKI) openssl(t testing.TB, args ...string) {
	t.Helper()
	if err := pkiCommand("openssl", args...); err != nil {
		t.Fatalf("PKI: %v", err)
	}
}

// pkiCommand runs openssl or keytool, bounded by pkiTimeout.
func pkiCommand(tool string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pkiTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return nil
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
