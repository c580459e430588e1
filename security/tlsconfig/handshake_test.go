package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"maps"
	"testing"
)

// merge returns base with the overrides applied; a "" override deletes.
func merge(base map[string]string, overrides ...string) map[string]string {
	m := maps.Clone(base)
	if m == nil {
		m = map[string]string{}
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		if overrides[i+1] == "\x00" {
			delete(m, overrides[i])
			continue
		}
		m[overrides[i]] = overrides[i+1]
	}
	return m
}

func (p *testPKI) serverPEMProps() map[string]string {
	return map[string]string{
		KeystoreType: "PEM", KeystoreKey: p.serverKeyPEM, KeystoreCertificateChain: p.serverPEM,
		TruststoreType: "PEM", TruststoreCertificates: p.caPEM,
	}
}

func (p *testPKI) clientPEMProps() map[string]string {
	return map[string]string{
		KeystoreType: "PEM", KeystoreKey: p.clientKeyPEM, KeystoreCertificateChain: p.clientPEM,
		TruststoreType: "PEM", TruststoreCertificates: p.caPEM,
	}
}

func mustServer(t *testing.T, props map[string]string) *tls.Config {
	t.Helper()
	cfg, err := Server(props)
	if err != nil {
		t.Fatalf("Server: %v", err)
	}
	return cfg
}

func mustClient(t *testing.T, props map[string]string, serverName string) *tls.Config {
	t.Helper()
	cfg, err := Client(props, serverName)
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	return cfg
}

// TestStoreFormats runs a mutual-TLS handshake with each way of giving the
// key and trust material.
func TestStoreFormats(t *testing.T) {
	p := fixture(t)
	clientProps := merge(p.clientPEMProps())
	for _, c := range []struct {
		name   string
		server map[string]string
	}{
		{"inline PEM", p.serverPEMProps()},
		{"PEM files", map[string]string{
			KeystoreType: "PEM", KeystoreLocation: p.file("server-bundle.pem"),
			TruststoreType: "PEM", TruststoreLocation: p.file("ca.pem"),
		}},
		{"encrypted PEM key, PBES2 AES-256 HMAC-SHA256", map[string]string{
			KeystoreType: "PEM", KeystoreKey: p.read(t, "server-aes256.key"), KeyPassword: "keypass",
			KeystoreCertificateChain: p.serverPEM, TruststoreType: "PEM", TruststoreCertificates: p.caPEM,
		}},
		{"encrypted PEM key, PBES2 AES-128 HMAC-SHA1", map[string]string{
			KeystoreType: "PEM", KeystoreKey: p.read(t, "server-aes128-sha1.key"), KeyPassword: "keypass",
			KeystoreCertificateChain: p.serverPEM, TruststoreType: "PEM", TruststoreCertificates: p.caPEM,
		}},
		{"encrypted PEM key, PBES2 3DES", map[string]string{
			KeystoreType: "PEM", KeystoreKey: p.read(t, "server-des3.key"), KeyPassword: "keypass",
			KeystoreCertificateChain: p.serverPEM, TruststoreType: "PEM", TruststoreCertificates: p.caPEM,
		}},
		{"encrypted PEM key, PKCS#12 PBE SHA-1 3DES", map[string]string{
			KeystoreType: "PEM", KeystoreKey: p.read(t, "server-pbes1.key"), KeyPassword: "keypass",
			KeystoreCertificateChain: p.serverPEM, TruststoreType: "PEM", TruststoreCertificates: p.caPEM,
		}},
		{"JKS (keytool)", map[string]string{
			KeystoreLocation: p.file("server.jks"), KeystorePassword: "storepw",
			TruststoreLocation: p.file("trust.jks"), TruststorePassword: "storepw",
		}},
		{"JKS key with its own password", map[string]string{
			KeystoreLocation: p.file("server-keypass.jks"), KeystorePassword: "storepw", KeyPassword: "keypass",
			TruststoreLocation: p.file("trust.jks"), TruststorePassword: "storepw",
		}},
		{"JKS trust store without a password", map[string]string{
			KeystoreLocation: p.file("server.jks"), KeystorePassword: "storepw",
			TruststoreLocation: p.file("trust.jks"),
		}},
		{"PKCS12 (openssl) key store, keytool PKCS12 trust store", map[string]string{
			KeystoreType: "PKCS12", KeystoreLocation: p.file("server.p12"), KeystorePassword: "storepw",
			TruststoreType: "PKCS12", TruststoreLocation: p.file("trust.p12"), TruststorePassword: "storepw",
		}},
		{"PKCS12 files under the default type JKS", map[string]string{
			KeystoreLocation: p.file("server.p12"), KeystorePassword: "storepw",
			TruststoreLocation: p.file("trust.p12"), TruststorePassword: "storepw",
		}},
		{"JKS files under type PKCS12", map[string]string{
			KeystoreType: "PKCS12", KeystoreLocation: p.file("server.jks"), KeystorePassword: "storepw",
			TruststoreType: "pkcs12", TruststoreLocation: p.file("trust.jks"), TruststorePassword: "storepw",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			server := mustServer(t, merge(c.server, ClientAuth, "required"))
			client := mustClient(t, clientProps, "broker.test")
			state, cerr, serr := handshake(t, server, client)
			if cerr != nil || serr != nil {
				t.Fatalf("handshake: client %v, server %v", cerr, serr)
			}
			if len(state.PeerCertificates) == 0 || state.PeerCertificates[0].Subject.CommonName != "client" {
				t.Fatalf("server saw client certificates %v", state.PeerCertificates)
			}
		})
	}
}

// TestStoreFormatsAsClient loads the client's material from JKS and PKCS12.
func TestStoreFormatsAsClient(t *testing.T) {
	p := fixture(t)
	server := mustServer(t, merge(p.serverPEMProps(), ClientAuth, "required"))
	for name, props := range map[string]map[string]string{
		"PKCS12 key store, JKS trust store": {
			KeystoreType: "PKCS12", KeystoreLocation: p.file("client.p12"), KeystorePassword: "storepw",
			TruststoreLocation: p.file("trust.jks"), TruststorePassword: "storepw",
		},
		"PEM trust file, no key store": {TruststoreType: "PEM", TruststoreLocation: p.file("ca.pem")},
		// Java trusts the certificate of a key entry in a trust store; here
		// the server's own certificate, pinned.
		"the server's PKCS12 key store as trust store": {
			KeystoreType: "PKCS12", KeystoreLocation: p.file("client.p12"), KeystorePassword: "storepw",
			TruststoreType: "PKCS12", TruststoreLocation: p.file("server.p12"), TruststorePassword: "storepw",
		},
		"the server's JKS key store as trust store": {
			KeystoreType: "PKCS12", KeystoreLocation: p.file("client.p12"), KeystorePassword: "storepw",
			TruststoreLocation: p.file("server.jks"), TruststorePassword: "storepw",
		},
	} {
		t.Run(name, func(t *testing.T) {
			state, cerr, serr := handshake(t, server, mustClient(t, props, "broker.test"))
			if props[KeystoreLocation] == "" {
				if serr == nil {
					t.Fatal("server accepted a client without a certificate")
				}
				return
			}
			if cerr != nil || serr != nil {
				t.Fatalf("handshake: client %v, server %v", cerr, serr)
			}
			if state.PeerCertificates[0].Subject.CommonName != "client" {
				t.Fatalf("server saw %v", state.PeerCertificates[0].Subject)
			}
		})
	}
}

func TestClientAuth(t *testing.T) {
	p := fixture(t)
	// A client that sends the other CA's certificate whatever the server
	// asks for (Go's client would otherwise hold it back, since the server
	// names its CA in the request).
	intruder := mustClient(t, merge(p.clientPEMProps(), KeystoreKey, "\x00", KeystoreCertificateChain, "\x00", KeystoreType, "\x00"), "broker.test")
	intruder.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &p.otherClient, nil }
	good := mustClient(t, p.clientPEMProps(), "broker.test")
	anonymous := mustClient(t, merge(p.clientPEMProps(), KeystoreKey, "\x00", KeystoreCertificateChain, "\x00"), "broker.test")
	for _, c := range []struct {
		auth     string
		client   *tls.Config
		ok       bool
		wantPeer string
	}{
		{"required", good, true, "client"},
		{"required", anonymous, false, ""},
		{"required", intruder, false, ""},
		{"REQUIRED", good, true, "client"},
		{"requested", good, true, "client"},
		{"requested", anonymous, true, ""},
		{"requested", intruder, false, ""},
		{"none", good, true, ""},
		{"none", intruder, true, ""},
		{"\x00", good, true, ""}, // unset is none
	} {
		server := mustServer(t, merge(p.serverPEMProps(), ClientAuth, c.auth))
		state, cerr, serr := handshake(t, server, c.client)
		name := c.auth
		if c.client == intruder {
			name += " with another CA's certificate"
		} else if c.client == anonymous {
			name += " without a certificate"
		}
		if c.ok != (cerr == nil && serr == nil) {
			t.Errorf("%s: client %v, server %v; want ok=%v", name, cerr, serr, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		got := ""
		if len(state.PeerCertificates) > 0 {
			got = state.PeerCertificates[0].Subject.CommonName
		}
		if got != c.wantPeer {
			t.Errorf("%s: server saw client %q, want %q", name, got, c.wantPeer)
		}
	}
	if _, err := Server(merge(p.serverPEMProps(), ClientAuth, "require")); !isPropErr(err, ClientAuth) {
		t.Errorf("ssl.client.auth=require: %v", err)
	}
}

func isPropErr(err error, property string) bool {
	var pe *PropertyError
	return errors.As(err, &pe) && pe.Property == property && errors.Is(err, ErrConfig)
}

func TestEndpointIdentification(t *testing.T) {
	p := fixture(t)
	server := mustServer(t, p.serverPEMProps())
	untrusted := merge(p.clientPEMProps(), TruststoreCertificates, p.otherCAPEM)
	for _, c := range []struct {
		name       string
		props      map[string]string
		serverName string
		ok         bool
	}{
		{"https default, matching name", p.clientPEMProps(), "broker.test", true},
		{"https default, IP SAN", p.clientPEMProps(), "127.0.0.1", true},
		{"https default, wrong name", p.clientPEMProps(), "other.test", false},
		{"HTTPS, wrong name", merge(p.clientPEMProps(), EndpointIdentification, "HTTPS"), "other.test", false},
		{"off, wrong name", merge(p.clientPEMProps(), EndpointIdentification, ""), "other.test", true},
		{"off, no name", merge(p.clientPEMProps(), EndpointIdentification, ""), "", true},
		{"off still checks the chain", merge(untrusted, EndpointIdentification, ""), "broker.test", false},
		{"https checks the chain", untrusted, "broker.test", false},
	} {
		_, cerr, serr := handshake(t, server, mustClient(t, c.props, c.serverName))
		if c.ok != (cerr == nil && serr == nil) {
			t.Errorf("%s: client %v, server %v; want ok=%v", c.name, cerr, serr, c.ok)
		}
		var hostErr x509.HostnameError
		if !c.ok && c.name == "https default, wrong name" && !errors.As(cerr, &hostErr) {
			t.Errorf("%s: client error %v is not a host name error", c.name, cerr)
		}
	}
	if _, err := Client(merge(p.clientPEMProps(), EndpointIdentification, "dns"), "x"); !isPropErr(err, EndpointIdentification) {
		t.Errorf("unknown algorithm: %v", err)
	}
}

func TestProtocolsAndCipherSuites(t *testing.T) {
	p := fixture(t)
	const (
		aes128 = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
		aes256 = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
	)
	for _, c := range []struct {
		name          string
		server        []string
		client        []string
		ok            bool
		wantVersion   uint16
		wantSuite     uint16
		serverIgnored bool
	}{
		{"defaults negotiate TLS 1.3", nil, nil, true, tls.VersionTLS13, 0, false},
		{"server TLSv1.2 only", []string{EnabledProtocols, "TLSv1.2"}, nil, true, tls.VersionTLS12, 0, false},
		{"client TLSv1.2 only", nil, []string{EnabledProtocols, "TLSv1.2"}, true, tls.VersionTLS12, 0, false},
		{"client ssl.protocol TLSv1.2 caps TLS 1.3", nil, []string{Protocol, "TLSv1.2"}, true, tls.VersionTLS12, 0, false},
		{"server ssl.protocol TLSv1.2 does not cap", []string{Protocol, "TLSv1.2"}, nil, true, tls.VersionTLS13, 0, false},
		{"1.3 server, 1.2 client", []string{EnabledProtocols, "TLSv1.3"}, []string{EnabledProtocols, "TLSv1.2"}, false, 0, 0, false},
		{"one suite each side, same", []string{EnabledProtocols, "TLSv1.2", CipherSuites, aes128},
			[]string{CipherSuites, aes128 + "," + aes256}, true, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, false},
		{"one suite each side, different", []string{EnabledProtocols, "TLSv1.2", CipherSuites, aes128},
			[]string{CipherSuites, aes256}, false, 0, 0, false},
		{"only 1.2 suites listed turns TLS 1.3 off", []string{CipherSuites, aes256}, nil,
			true, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, false},
		{"only 1.3 suites listed turns TLS 1.2 off", []string{CipherSuites, "TLS_AES_128_GCM_SHA256"},
			[]string{EnabledProtocols, "TLSv1.2"}, false, 0, 0, false},
		{"Java-only suites are dropped", []string{CipherSuites, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256, " + aes128 + ", TLS_EMPTY_RENEGOTIATION_INFO_SCSV"},
			[]string{EnabledProtocols, "TLSv1.2"}, true, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, false},
		{"SSLv2Hello is ignored", []string{EnabledProtocols, "SSLv2Hello,TLSv1.2"}, nil, true, tls.VersionTLS12, 0, false},
	} {
		server := mustServer(t, merge(p.serverPEMProps(), c.server...))
		client := mustClient(t, merge(p.clientPEMProps(), c.client...), "broker.test")
		state, cerr, serr := handshake(t, server, client)
		if c.ok != (cerr == nil && serr == nil) {
			t.Errorf("%s: client %v, server %v; want ok=%v", c.name, cerr, serr, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if state.Version != c.wantVersion {
			t.Errorf("%s: version %s, want %s", c.name, VersionName(state.Version), VersionName(c.wantVersion))
		}
		if c.wantSuite != 0 && state.CipherSuite != c.wantSuite {
			t.Errorf("%s: suite %s, want %s", c.name, tls.CipherSuiteName(state.CipherSuite), tls.CipherSuiteName(c.wantSuite))
		}
	}
}

func TestProtocolAndSuiteErrors(t *testing.T) {
	p := fixture(t)
	for _, c := range []struct {
		name, property string
		overrides      []string
		wantInMessage  string
	}{
		{"unknown suite", CipherSuites, []string{CipherSuites, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_FOO"}, "TLS_FOO"},
		{"only Java-only suites", CipherSuites, []string{CipherSuites, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"}, "none of the listed suites"},
		{"1.3 suites with 1.2 protocol", CipherSuites, []string{EnabledProtocols, "TLSv1.2", CipherSuites, "TLS_AES_128_GCM_SHA256"}, "TLSv1.2"},
		{"SSLv3", EnabledProtocols, []string{EnabledProtocols, "SSLv3,TLSv1.2"}, "SSLv3"},
		{"lower-case protocol", EnabledProtocols, []string{EnabledProtocols, "tlsv1.2"}, "tlsv1.2"},
		{"only SSLv2Hello", EnabledProtocols, []string{EnabledProtocols, "SSLv2Hello"}, "no TLS protocol"},
		{"unknown ssl.protocol", Protocol, []string{Protocol, "TLSv2"}, "TLSv2"},
	} {
		_, err := Server(merge(p.serverPEMProps(), c.overrides...))
		if !isPropErr(err, c.property) || !contains(err.Error(), c.wantInMessage) {
			t.Errorf("%s: %v; want an error on %s mentioning %q", c.name, err, c.property, c.wantInMessage)
		}
	}
	_, err := Client(merge(p.clientPEMProps(), EnabledProtocols, "TLSv1.3", Protocol, "TLSv1.2"), "x")
	if !isPropErr(err, Protocol) {
		t.Errorf("ssl.protocol below every enabled protocol: %v", err)
	}
	cfg := mustClient(t, merge(p.clientPEMProps(), EnabledProtocols, "TLSv1,TLSv1.1"), "x")
	if cfg.MinVersion != tls.VersionTLS10 || cfg.MaxVersion != tls.VersionTLS11 {
		t.Errorf("TLSv1,TLSv1.1 gives %s..%s", VersionName(cfg.MinVersion), VersionName(cfg.MaxVersion))
	}
	cfg = mustClient(t, merge(p.clientPEMProps(), CipherSuites, "SSL_RSA_WITH_3DES_EDE_CBC_SHA"), "x")
	if len(cfg.CipherSuites) != 1 || cfg.CipherSuites[0] != tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA {
		t.Errorf("SSL_ alias: %v", cfg.CipherSuites)
	}
}
