package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
)

// Server builds the TLS configuration of a broker listener from its ssl.*
// properties, as Kafka's DefaultSslEngineFactory builds a server
// SSLEngine: the key store is required, the trust store verifies client
// certificates (the system roots when none is set, as Java falls back to
// cacerts), and ssl.client.auth says whether a client certificate is
// required, requested or not asked for. Store files are read once, here.
func Server(properties map[string]string) (*tls.Config, error) {
	p := props(properties)
	cfg, err := baseConfig(p)
	if err != nil {
		return nil, err
	}
	certs, err := keyStore(p)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, propErr(KeystoreLocation, nil, "is not set: a server needs a key store (%s, or %s and %s with %s=PEM)",
			KeystoreLocation, KeystoreKey, KeystoreCertificateChain, KeystoreType)
	}
	cfg.Certificates = certs
	if cfg.ClientCAs, err = trustStore(p); err != nil {
		return nil, err
	}
	if cfg.ClientAuth, err = clientAuth(p); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Client builds the TLS configuration of a connection to a broker (an
// inter-broker or controller client), as Kafka's DefaultSslEngineFactory
// builds a client SSLEngine. serverName is the host the connection goes
// to: it is sent as SNI and, with endpoint identification on, checked
// against the broker's certificate. It may be "" when the caller dials
// with tls.Dial, which fills it in from the address; a config shared by
// connections to several brokers should be Cloned per host with
// ServerName set.
//
// ssl.endpoint.identification.algorithm "https" (the default; "ldap" and
// "ldaps" act the same here) verifies chain and host name; "" verifies the
// chain against the trust store but not the host name. The key store is
// optional (for brokers that require client certificates).
func Client(properties map[string]string, serverName string) (*tls.Config, error) {
	p := props(properties)
	cfg, err := baseConfig(p)
	if err != nil {
		return nil, err
	}
	limit, err := protocolCap(p)
	if err != nil {
		return nil, err
	}
	if cfg.MaxVersion > limit {
		cfg.MaxVersion = limit
	}
	if cfg.MinVersion > cfg.MaxVersion {
		return nil, propErr(Protocol, nil, "%s rules out every protocol that %s and %s leave", p.getDefault(Protocol, DefaultProtocol), EnabledProtocols, CipherSuites)
	}
	if cfg.Certificates, err = keyStore(p); err != nil {
		return nil, err
	}
	if cfg.RootCAs, err = trustStore(p); err != nil {
		return nil, err
	}
	cfg.ServerName = serverName
	switch alg := p.getDefault(EndpointIdentification, DefaultEndpointIdentification); strings.ToLower(alg) {
	case "https", "ldap", "ldaps":
	case "":
		// Go has no "chain but not name" mode: skip its verification and
		// do the chain part in VerifyConnection, which also runs on
		// resumed sessions.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChainOnly(cfg.RootCAs)
	default:
		return nil, propErr(EndpointIdentification, nil, "unknown endpoint identification algorithm %q (use https, or empty to turn host name checks off)", alg)
	}
	return cfg, nil
}

// baseConfig holds what server and client share: the protocol versions and
// the cipher suites.
func baseConfig(p props) (*tls.Config, error) {
	lo, hi, err := versionRange(p)
	if err != nil {
		return nil, err
	}
	if _, err := protocolCap(p); err != nil {
		return nil, err
	}
	sel, err := cipherSuites(p)
	if err != nil {
		return nil, err
	}
	// Without a suite for a version, JSSE cannot negotiate that version.
	if !sel.tls12 && lo < tls.VersionTLS13 {
		lo = tls.VersionTLS13
	}
	if !sel.tls13 && hi > tls.VersionTLS12 {
		hi = tls.VersionTLS12
	}
	if lo > hi {
		return nil, propErr(CipherSuites, nil, "none of the listed suites can be used with %s %s",
			EnabledProtocols, strings.Join(p.list(EnabledProtocols, DefaultEnabledProtocols), ","))
	}
	cfg := &tls.Config{MinVersion: lo, MaxVersion: hi}
	if len(sel.ids) > 0 {
		cfg.CipherSuites = sel.ids
	}
	return cfg, nil
}

// clientAuth reads ssl.client.auth (Kafka's SslClientAuth, case
// insensitive). Kafka logs a warning for an unknown value and uses none;
// here it is an error, since a typo would silently drop authentication.
func clientAuth(p props) (tls.ClientAuthType, error) {
	switch v := p.getDefault(ClientAuth, DefaultClientAuth); strings.ToLower(v) {
	case "none", "":
		return tls.NoClientCert, nil
	case "requested":
		return tls.VerifyClientCertIfGiven, nil
	case "required":
		return tls.RequireAndVerifyClientCert, nil
	default:
		return 0, propErr(ClientAuth, nil, "unknown value %q (none, requested or required)", v)
	}
}

// errNoServerCertificate is reported when a server sends no certificate.
var errNoServerCertificate = errors.New("the server sent no certificate")

// verifyChainOnly checks the server's chain against roots (nil: the system
// roots) for server authentication, without a host name: Java's trust
// manager when no endpoint identification algorithm is set.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errNoServerCertificate
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
