package principal

import (
	"crypto/x509"
	"fmt"
)

var defaultMapper = &SSLMapper{rules: []sslRule{{isDefault: true}}}

// FromCertificate builds the principal of an SSL connection as Kafka's
// DefaultKafkaPrincipalBuilder does: no client certificate (ssl.client.auth
// none, or requested and not sent) is Anonymous; otherwise User:<name>,
// where the name is the mapper's result for the certificate's
// distinguished name. A nil mapper is the DEFAULT rule. A mapping failure
// is an error; Kafka fails the authentication then.
func FromCertificate(cert *x509.Certificate, m *SSLMapper) (Principal, error) {
	if cert == nil {
		return Anonymous, nil
	}
	if m == nil {
		m = defaultMapper
	}
	dn := DistinguishedName(cert)
	name, err := m.Name(dn)
	if err != nil {
		return Principal{}, fmt.Errorf("failed to map name for '%s' based on SSL principal mapping rules: %w", dn, err)
	}
	return User(name), nil
}
