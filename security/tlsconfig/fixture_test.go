package tlsconfig

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testPKI is one CA with a server and a client certificate, and a second,
// unrelated CA with a client certificate of its own.
type testPKI struct {
	caPEM, serverPEM, serverKeyPEM, clientPEM, clientKeyPEM string
	otherCAPEM, otherClientPEM, otherClientKeyPEM           string
	caCert                                                  *x509.Certificate
	otherClient                                             tls.Certificate
	dir                                                     string
}

var (
	pkiOnce sync.Once
	pki     *testPKI
	pkiErr  error
	pkiDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pkiDir != "" {
		os.RemoveAll(pkiDir)
	}
	os.Exit(code)
}

// fixture builds the shared certificates and store files once per test
// binary (keytool is slow to start) and fails the test if that failed.
func fixture(t *testing.T) *testPKI {
	t.Helper()
	pkiOnce.Do(func() {
		pkiDir, pkiErr = os.MkdirTemp("", "tlsconfig-test-")
		if pkiErr == nil {
			pki, pkiErr = buildPKI(pkiDir)
		}
	})
	if pkiErr != nil {
		t.Fatalf("building the test PKI: %v", pkiErr)
	}
	return pki
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

type issued struct {
	cert *x509.Certificate
	key  crypto.Signer
}

var serial int64

func issue(parent *issued, tmpl *x509.Certificate) (*issued, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	serial++
	tmpl.SerialNumber = big.NewInt(serial)
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	parentCert, parentKey := tmpl, crypto.Signer(key)
	if parent != nil {
		parentCert, parentKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &issued{cert, key}, nil
}

func newCA(cn string) (*issued, error) {
	return issue(nil, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn, Organization: []string{"kbroker"}}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
}

func leaf(ca *issued, cn string, usage x509.ExtKeyUsage, dns ...string) (*issued, error) {
	return issue(ca, &x509.Certificate{
		Subject:  pkix.Name{CommonName: cn, OrganizationalUnit: []string{"eng"}, Organization: []string{"kbroker"}},
		DNSNames: dns, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	})
}

func certPEM(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

func keyPEM(k crypto.Signer) string {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func buildPKI(dir string) (*testPKI, error) {
	ca, err := newCA("Test CA")
	if err != nil {
		return nil, err
	}
	server, err := leaf(ca, "broker", x509.ExtKeyUsageServerAuth, "broker.test", "localhost")
	if err != nil {
		return nil, err
	}
	client, err := leaf(ca, "client", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	other, err := newCA("Other CA")
	if err != nil {
		return nil, err
	}
	otherClient, err := leaf(other, "intruder", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	p := &testPKI{
		caPEM: certPEM(ca.cert), caCert: ca.cert, dir: dir,
		serverPEM: certPEM(server.cert) + certPEM(ca.cert), serverKeyPEM: keyPEM(server.key),
		clientPEM: certPEM(client.cert), clientKeyPEM: keyPEM(client.key),
		otherCAPEM: certPEM(other.cert), otherClientPEM: certPEM(otherClient.cert), otherClientKeyPEM: keyPEM(otherClient.key),
		otherClient: tls.Certificate{Certificate: [][]byte{otherClient.cert.Raw}, PrivateKey: otherClient.key, Leaf: otherClient.cert},
	}
	files := map[string]string{
		"ca.pem": p.caPEM, "server.pem": p.serverPEM, "server.key": p.serverKeyPEM,
		"client.pem": p.clientPEM, "client.key": p.clientKeyPEM,
		"server-bundle.pem": p.serverKeyPEM + p.serverPEM,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	for _, step := range storeRecipe(dir) {
		if err := run(step[0], step[1:]...); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// storeRecipe makes the JKS and PKCS12 files with the tools Kafka users
// use: openssl for PKCS12 key stores and encrypted PEM keys, keytool for
// JKS stores and Java PKCS12 trust stores.
func storeRecipe(dir string) [][]string {
	f := func(name string) string { return filepath.Join(dir, name) }
	return [][]string{
		{"openssl", "pkcs12", "-export", "-in", f("server.pem"), "-inkey", f("server.key"), "-name", "broker",
			"-out", f("server.p12"), "-passout", "pass:storepw"},
		{"openssl", "pkcs12", "-export", "-in", f("client.pem"), "-inkey", f("client.key"), "-name", "client",
			"-out", f("client.p12"), "-passout", "pass:storepw"},
		// A PKCS12 "trust store" as openssl makes it: no Java trust mark.
		{"openssl", "pkcs12", "-export", "-nokeys", "-in", f("ca.pem"), "-out", f("openssl-trust.p12"), "-passout", "pass:storepw"},
		{"keytool", "-importkeystore", "-noprompt", "-srckeystore", f("server.p12"), "-srcstoretype", "PKCS12",
			"-srcstorepass", "storepw", "-destkeystore", f("server.jks"), "-deststoretype", "JKS", "-deststorepass", "storepw"},
		// A JKS key with a password of its own.
		{"keytool", "-importkeystore", "-noprompt", "-srckeystore", f("server.p12"), "-srcstoretype", "PKCS12",
			"-srcstorepass", "storepw", "-srcalias", "broker", "-destkeystore", f("server-keypass.jks"), "-deststoretype", "JKS",
			"-deststorepass", "storepw", "-destkeypass", "keypass"},
		{"keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", f("ca.pem"), "-keystore", f("trust.jks"),
			"-storetype", "JKS", "-storepass", "storepw"},
		{"keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", f("ca.pem"), "-keystore", f("trust.p12"),
			"-storetype", "PKCS12", "-storepass", "storepw"},
		{"openssl", "pkcs8", "-topk8", "-in", f("server.key"), "-out", f("server-aes256.key"), "-passout", "pass:keypass"},
		{"openssl", "pkcs8", "-topk8", "-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1", "-in", f("server.key"),
			"-out", f("server-aes128-sha1.key"), "-passout", "pass:keypass"},
		{"openssl", "pkcs8", "-topk8", "-v2", "des3", "-in", f("server.key"), "-out", f("server-des3.key"), "-passout", "pass:keypass"},
		{"openssl", "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES", "-in", f("server.key"), "-out", f("server-pbes1.key"), "-passout", "pass:keypass"},
	}
}

// run runs a tool with a time limit. A missing tool is an error, so tests
// that need keytool or openssl fail rather than skip.
func run(name string, args ...string) error {
	path, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s is needed to build test key stores: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w\n%s", name, args, err, out.String())
	}
	return nil
}

func (p *testPKI) file(name string) string { return filepath.Join(p.dir, name) }

func (p *testPKI) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(p.file(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// handshake runs a TLS handshake between the two configs over a loopback
// TCP connection (kernel buffers keep an alert from blocking its sender, as
// it can over net.Pipe), sends one byte from client to server, and returns
// both sides' errors and the server's view of the connection.
func handshake(t *testing.T, server, client *tls.Config) (state tls.ConnectionState, clientErr, serverErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deadline := time.Now().Add(10 * time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			serverErr = err
			return
		}
		conn.SetDeadline(deadline)
		srv := tls.Server(conn, server)
		defer srv.Close()
		if serverErr = srv.Handshake(); serverErr == nil {
			// TLS 1.3 servers check a client certificate after sending their
			// Finished; reading the client's byte makes sure all is done.
			_, serverErr = srv.Read(make([]byte, 1))
		}
		state = srv.ConnectionState()
	}()
	conn, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(deadline)
	cli := tls.Client(conn, client)
	if clientErr = cli.Handshake(); clientErr == nil {
		if _, clientErr = cli.Write([]byte{1}); clientErr == nil {
			// A TLS 1.3 rejection of the client's certificate arrives now.
			cli.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if _, err := cli.Read(make([]byte, 1)); err != nil && !isTimeoutOrEOF(err) {
				clientErr = err
			}
		}
	}
	<-done
	cli.Close()
	return state, clientErr, serverErr
}

func isTimeoutOrEOF(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || (errors.As(err, &ne) && ne.Timeout())
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
