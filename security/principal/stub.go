// Placeholder until the real package is merged; do not build on it.
package principal

import "crypto/x509"

type Principal struct{ Type, Name string }

func (p Principal) String() string { return p.Type + ":" + p.Name }

type SSLMapper struct{}

func ParseSSLMappingRules(string) (*SSLMapper, error)                  { return nil, nil }
func FromCertificate(*x509.Certificate, *SSLMapper) (Principal, error) { return Principal{}, nil }
