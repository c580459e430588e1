package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/security/tlsconfig"
)

// Listener keystores and truststores reloaded without a restart, as
// Kafka's SslFactory does on a dynamic change of a listener's ssl.*
// configs (listener.name.<l>.ssl.keystore.location and the rest), and
// when such a config is set again to the same value after the file
// changed in place (DynamicBrokerConfig.reloadUpdatedFilesWithoutConfigChange).
// New connections get the new certificates; open ones keep theirs.

// reloadableTLS is one TLS listener's configuration in force: each
// connection's handshake takes the current one.
type reloadableTLS struct {
	cur atomic.Pointer[tls.Config]
	// ssl is the ssl.* settings cur was built from.
	ssl atomic.Pointer[map[string]string]
}

func newReloadableTLS(tc *tls.Config, ssl map[string]string) *reloadableTLS {
	r := &reloadableTLS{}
	r.cur.Store(tc)
	s := maps.Clone(ssl)
	r.ssl.Store(&s)
	return r
}

// serverConfig is what the listener hands to tls.Server.
func (r *reloadableTLS) serverConfig() *tls.Config {
	return &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return r.cur.Load(), nil }}
}

// listenerTLSBuild is a listener's new TLS configuration, checked but not
// yet in force.
type listenerTLSBuild struct {
	r   *reloadableTLS
	tc  *tls.Config
	ssl map[string]string
}

// buildListenerTLS builds the TLS configuration of every TLS listener
// whose ssl.* settings differ in cfg from those in force, or, with
// reload, that cfg sets dynamically at all (the files may have changed in
// place). A keystore whose certificate names another subject than the
// current one is refused, as SslFactory's CertificateEntries.ensureCompatible
// refuses it: clients that pin the broker's identity would break.
func (b *Broker) buildListenerTLS(cfg *config.Config, reload map[string]bool) ([]listenerTLSBuild, error) {
	var out []listenerTLSBuild
	for _, l := range b.cfg.Listeners {
		r := b.listenerTLS[l.Name]
		if r == nil {
			continue
		}
		ssl := cfg.ListenerSecurity(l.Name).SSL
		if maps.Equal(ssl, *r.ssl.Load()) && !reload[strings.ToLower(l.Name)] {
			continue
		}
		tc, err := tlsconfig.Server(ssl)
		if err != nil {
			return nil, sslValidationError(fmt.Sprintf("Validation of dynamic config update of SSLFactory failed: listener %s: %v", l.Name, err))
		}
		if err := sameIdentity(r.cur.Load(), tc); err != nil {
			return nil, sslValidationError(fmt.Sprintf("Validation of dynamic config update of SSLFactory failed: listener %s: %v", l.Name, err))
		}
		out = append(out, listenerTLSBuild{r, tc, ssl})
	}
	return out, nil
}

// applyListenerTLS puts built configurations into force.
func (b *Broker) applyListenerTLS(builds []listenerTLSBuild) {
	for _, nb := range builds {
		nb.r.cur.Store(nb.tc)
		s := nb.ssl
		nb.r.ssl.Store(&s)
	}
	if len(builds) > 0 {
		b.logger.Info("listener TLS keystores reloaded", "listeners", len(builds))
	}
}

// sameIdentity compares the leaf certificates' subjects and subject
// alternative names.
func sameIdentity(old, next *tls.Config) error {
	a, b := leaf(old), leaf(next)
	if a == nil || b == nil {
		return nil
	}
	if a.Subject.String() != b.Subject.String() {
		return sslValidationError("Keystore DistinguishedName does not match: existing={" + a.Subject.String() + "}, new={" + b.Subject.String() + "}")
	}
	if !slices.Equal(a.DNSNames, b.DNSNames) || !slices.EqualFunc(a.IPAddresses, b.IPAddresses, net.IP.Equal) {
		return sslValidationError("Keystore SubjectAltNames do not match")
	}
	return nil
}

func leaf(tc *tls.Config) *x509.Certificate {
	if tc == nil || len(tc.Certificates) == 0 || len(tc.Certificates[0].Certificate) == 0 {
		return nil
	}
	c, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0])
	if err != nil {
		return nil
	}
	return c
}

// tlsReloadListeners are the listeners whose ssl.*.location props name
// again: the files are re-read even if the value did not change.
func tlsReloadListeners(props map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range props {
		rest, ok := strings.CutPrefix(k, "listener.name.")
		if !ok {
			continue
		}
		name, key, ok := strings.Cut(rest, ".")
		if ok && (key == "ssl.keystore.location" || key == "ssl.truststore.location") {
			out[strings.ToLower(name)] = true
		}
	}
	return out
}

// sslValidationError carries Kafka's texts, capitalised as Kafka writes
// them: kafka-configs shows them to the operator.
type sslValidationError string

func (e sslValidationError) Error() string { return string(e) }
