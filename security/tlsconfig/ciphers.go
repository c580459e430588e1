package tlsconfig

import (
	"crypto/tls"
	"strings"
)

// tls13Suites are the TLS 1.3 suites, which both JSSE and Go implement.
// Go does not let a program choose among them: listing any of them keeps
// TLS 1.3 on with all three.
var tls13Suites = map[string]bool{
	"TLS_AES_128_GCM_SHA256":       true,
	"TLS_AES_256_GCM_SHA384":       true,
	"TLS_CHACHA20_POLY1305_SHA256": true,
}

// javaOnlySuites are suites the JDK's SunJSSE provider knows (OpenJDK 17's
// list with every algorithm allowed) that Go's TLS does not implement:
// finite-field DHE, static ECDH, anonymous, export and NULL suites, the
// renegotiation SCSV, and a few AES CBC variants. JSSE also knows each
// SSL_ name with a TLS_ prefix. Naming them is not a
// configuration error, as it is not in Kafka; they are left out, and
// naming only such suites is an error.
var javaOnlySuites = map[string]bool{
	"SSL_DHE_DSS_EXPORT_WITH_DES40_CBC_SHA":     true,
	"SSL_DHE_DSS_WITH_3DES_EDE_CBC_SHA":         true,
	"SSL_DHE_DSS_WITH_DES_CBC_SHA":              true,
	"SSL_DHE_RSA_EXPORT_WITH_DES40_CBC_SHA":     true,
	"SSL_DHE_RSA_WITH_3DES_EDE_CBC_SHA":         true,
	"SSL_DHE_RSA_WITH_DES_CBC_SHA":              true,
	"SSL_DH_anon_EXPORT_WITH_DES40_CBC_SHA":     true,
	"SSL_DH_anon_EXPORT_WITH_RC4_40_MD5":        true,
	"SSL_DH_anon_WITH_3DES_EDE_CBC_SHA":         true,
	"SSL_DH_anon_WITH_DES_CBC_SHA":              true,
	"SSL_DH_anon_WITH_RC4_128_MD5":              true,
	"SSL_RSA_EXPORT_WITH_DES40_CBC_SHA":         true,
	"SSL_RSA_EXPORT_WITH_RC4_40_MD5":            true,
	"SSL_RSA_WITH_DES_CBC_SHA":                  true,
	"SSL_RSA_WITH_NULL_MD5":                     true,
	"SSL_RSA_WITH_NULL_SHA":                     true,
	"SSL_RSA_WITH_RC4_128_MD5":                  true,
	"TLS_DHE_DSS_WITH_AES_128_CBC_SHA":          true,
	"TLS_DHE_DSS_WITH_AES_128_CBC_SHA256":       true,
	"TLS_DHE_DSS_WITH_AES_128_GCM_SHA256":       true,
	"TLS_DHE_DSS_WITH_AES_256_CBC_SHA":          true,
	"TLS_DHE_DSS_WITH_AES_256_CBC_SHA256":       true,
	"TLS_DHE_DSS_WITH_AES_256_GCM_SHA384":       true,
	"TLS_DHE_RSA_WITH_AES_128_CBC_SHA":          true,
	"TLS_DHE_RSA_WITH_AES_128_CBC_SHA256":       true,
	"TLS_DHE_RSA_WITH_AES_128_GCM_SHA256":       true,
	"TLS_DHE_RSA_WITH_AES_256_CBC_SHA":          true,
	"TLS_DHE_RSA_WITH_AES_256_CBC_SHA256":       true,
	"TLS_DHE_RSA_WITH_AES_256_GCM_SHA384":       true,
	"TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": true,
	"TLS_DH_anon_WITH_AES_128_CBC_SHA":          true,
	"TLS_DH_anon_WITH_AES_128_CBC_SHA256":       true,
	"TLS_DH_anon_WITH_AES_128_GCM_SHA256":       true,
	"TLS_DH_anon_WITH_AES_256_CBC_SHA":          true,
	"TLS_DH_anon_WITH_AES_256_CBC_SHA256":       true,
	"TLS_DH_anon_WITH_AES_256_GCM_SHA384":       true,
	"TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA":     true,
	"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384":   true,
	"TLS_ECDHE_ECDSA_WITH_NULL_SHA":             true,
	"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384":     true,
	"TLS_ECDHE_RSA_WITH_NULL_SHA":               true,
	"TLS_ECDH_ECDSA_WITH_3DES_EDE_CBC_SHA":      true,
	"TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA":       true,
	"TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256":    true,
	"TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256":    true,
	"TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA":       true,
	"TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384":    true,
	"TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384":    true,
	"TLS_ECDH_ECDSA_WITH_NULL_SHA":              true,
	"TLS_ECDH_ECDSA_WITH_RC4_128_SHA":           true,
	"TLS_ECDH_RSA_WITH_3DES_EDE_CBC_SHA":        true,
	"TLS_ECDH_RSA_WITH_AES_128_CBC_SHA":         true,
	"TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256":      true,
	"TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256":      true,
	"TLS_ECDH_RSA_WITH_AES_256_CBC_SHA":         true,
	"TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384":      true,
	"TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384":      true,
	"TLS_ECDH_RSA_WITH_NULL_SHA":                true,
	"TLS_ECDH_RSA_WITH_RC4_128_SHA":             true,
	"TLS_ECDH_anon_WITH_3DES_EDE_CBC_SHA":       true,
	"TLS_ECDH_anon_WITH_AES_128_CBC_SHA":        true,
	"TLS_ECDH_anon_WITH_AES_256_CBC_SHA":        true,
	"TLS_ECDH_anon_WITH_NULL_SHA":               true,
	"TLS_ECDH_anon_WITH_RC4_128_SHA":            true,
	"TLS_EMPTY_RENEGOTIATION_INFO_SCSV":         true,
	"TLS_RSA_WITH_AES_256_CBC_SHA256":           true,
	"TLS_RSA_WITH_NULL_SHA256":                  true,
}

// suiteSelection is what ssl.cipher.suites leaves Go's TLS with.
type suiteSelection struct {
	ids     []uint16 // TLS 1.0-1.2 suites, nil for Go's defaults
	tls12   bool     // some TLS 1.0-1.2 suite is usable
	tls13   bool     // some TLS 1.3 suite is usable
	ignored []string // Java-only suites that were dropped
}

// cipherSuites maps ssl.cipher.suites (JSSE names, which are the IANA
// names; the SSL_ prefix JSSE still accepts for old suites is read as
// TLS_) to Go suite IDs. An unset or empty list keeps Go's defaults. A name
// neither JSSE nor Go knows is an error naming it.
func cipherSuites(p props) (suiteSelection, error) {
	names := p.list(CipherSuites, "")
	if len(names) == 0 {
		return suiteSelection{tls12: true, tls13: true}, nil
	}
	byName := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		byName[s.Name] = s.ID
	}
	for _, s := range tls.InsecureCipherSuites() {
		byName[s.Name] = s.ID
	}
	sel := suiteSelection{ids: []uint16{}}
	seen := map[uint16]bool{}
	for _, name := range names {
		if tls13Suites[name] {
			sel.tls13 = true
			continue
		}
		id, ok := byName[name]
		if !ok && strings.HasPrefix(name, "SSL_") {
			id, ok = byName["TLS_"+strings.TrimPrefix(name, "SSL_")]
		}
		if ok {
			if !seen[id] {
				seen[id] = true
				sel.ids = append(sel.ids, id)
			}
			sel.tls12 = true
			continue
		}
		if javaOnlySuites[name] || javaOnlySuites["SSL_"+strings.TrimPrefix(name, "TLS_")] {
			sel.ignored = append(sel.ignored, name)
			continue
		}
		return suiteSelection{}, propErr(CipherSuites, nil, "unknown cipher suite %q", name)
	}
	if !sel.tls12 && !sel.tls13 {
		return suiteSelection{}, propErr(CipherSuites, nil,
			"none of the listed suites is implemented by Go's TLS (it has no DHE, static ECDH, anonymous, export or NULL suites): %s",
			strings.Join(names, ","))
	}
	return sel, nil
}
