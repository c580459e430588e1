package tlsconfig

import (
	"errors"
	"fmt"
	"strings"
)

// The ssl.* property names this package reads (Kafka's SslConfigs and
// BrokerSecurityConfigs), without any listener.name.<l>. prefix.
const (
	KeystoreType             = "ssl.keystore.type"
	KeystoreLocation         = "ssl.keystore.location"
	KeystorePassword         = "ssl.keystore.password"
	KeyPassword              = "ssl.key.password"
	KeystoreKey              = "ssl.keystore.key"
	KeystoreCertificateChain = "ssl.keystore.certificate.chain"
	TruststoreType           = "ssl.truststore.type"
	TruststoreLocation       = "ssl.truststore.location"
	TruststorePassword       = "ssl.truststore.password"
	TruststoreCertificates   = "ssl.truststore.certificates"
	ClientAuth               = "ssl.client.auth"
	EnabledProtocols         = "ssl.enabled.protocols"
	Protocol                 = "ssl.protocol"
	CipherSuites             = "ssl.cipher.suites"
	EndpointIdentification   = "ssl.endpoint.identification.algorithm"
)

// Kafka's defaults (SslConfigs.DEFAULT_*), for Kafka 3.x and 4.x on Java 11+.
const (
	DefaultStoreType              = "JKS"
	DefaultProtocol               = "TLSv1.3"
	DefaultEnabledProtocols       = "TLSv1.2,TLSv1.3"
	DefaultEndpointIdentification = "https"
	DefaultClientAuth             = "none"
)

// storeTypePEM is DefaultSslEngineFactory.PEM_TYPE; Kafka compares it case
// sensitively, so "pem" is not PEM there either.
const storeTypePEM = "PEM"

// ErrConfig is wrapped by every error of Server and Client.
var ErrConfig = errors.New("invalid SSL configuration")

// PropertyError says which property is wrong and why.
type PropertyError struct {
	Property string
	Reason   string
	Err      error // the underlying cause, if any
}

func (e *PropertyError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Property, e.Reason, e.Err)
	}
	return e.Property + ": " + e.Reason
}

// Unwrap gives ErrConfig and the cause, so errors.Is works for both.
func (e *PropertyError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrConfig, e.Err}
	}
	return []error{ErrConfig}
}

func propErr(property string, err error, format string, args ...any) error {
	return &PropertyError{Property: property, Reason: fmt.Sprintf(format, args...), Err: err}
}

// props reads the property map. An empty value counts as unset, so that
// templated configs ("ssl.keystore.password=") do not turn on half a key
// store; Kafka would read "" as a value and fail on it.
type props map[string]string

func (p props) get(key string) string { return strings.TrimSpace(p[key]) }

// secret is get without trimming: a password may end in a space.
func (p props) secret(key string) string { return p[key] }

func (p props) getDefault(key, def string) string {
	if v, ok := p[key]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

// list reads a Kafka LIST property: comma-separated, each item trimmed,
// empty items dropped.
func (p props) list(key, def string) []string {
	v, ok := p[key]
	if !ok {
		v = def
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
