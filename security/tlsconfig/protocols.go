package tlsconfig

import (
	"crypto/tls"
	"strings"
)

// protocolVersions are the JSSE protocol names Go's TLS can speak. Java
// names are case sensitive (SSLEngine.setEnabledProtocols rejects
// "tlsv1.2"), and so is this table. Go still implements TLS 1.0 and 1.1,
// so a Kafka config that lists them keeps them, as the JVM would if its
// jdk.tls.disabledAlgorithms allowed.
var protocolVersions = map[string]uint16{
	"TLSv1":   tls.VersionTLS10,
	"TLSv1.1": tls.VersionTLS11,
	"TLSv1.2": tls.VersionTLS12,
	"TLSv1.3": tls.VersionTLS13,
}

// versionRange turns ssl.enabled.protocols into Go's [MinVersion,
// MaxVersion]. Go cannot leave a hole in the range, so "TLSv1,TLSv1.2"
// also allows TLS 1.1. SSLv2Hello (a ClientHello format, not a protocol)
// is accepted and ignored; SSLv3 and anything else is an error. An empty
// list is the JVM's default, TLS 1.2 and 1.3.
func versionRange(p props) (lo, hi uint16, err error) {
	names := p.list(EnabledProtocols, DefaultEnabledProtocols)
	for _, name := range names {
		if name == "SSLv2Hello" {
			continue
		}
		v, ok := protocolVersions[name]
		if !ok {
			return 0, 0, propErr(EnabledProtocols, nil, "unsupported protocol %q (supported: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)", name)
		}
		if lo == 0 || v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	if lo == 0 {
		if len(names) > 0 {
			return 0, 0, propErr(EnabledProtocols, nil, "no TLS protocol in %q", strings.Join(names, ","))
		}
		lo, hi = tls.VersionTLS12, tls.VersionTLS13
	}
	return lo, hi, nil
}

// protocolCap reads ssl.protocol, the SSLContext algorithm. A client built
// from a "TLSv1.2" context does not offer TLS 1.3 even when
// ssl.enabled.protocols lists it (Kafka's SslConfigs documentation of
// ssl.protocol), so for a client it caps the highest version; "TLS",
// "TLSv1.3" and the old "SSL"/"SSLv2"/"SSLv3" names cap nothing. Kafka
// documents the effect for clients only, and Server only checks that the
// name is known.
func protocolCap(p props) (uint16, error) {
	name := p.getDefault(Protocol, DefaultProtocol)
	switch name {
	case "", "TLS", "TLSv1.3", "SSL", "SSLv2", "SSLv3":
		return tls.VersionTLS13, nil
	}
	if v, ok := protocolVersions[name]; ok {
		return v, nil
	}
	return 0, propErr(Protocol, nil, "unknown SSL protocol %q (use TLSv1.2 or TLSv1.3)", name)
}

// VersionName is the JSSE name of a TLS version, for messages and logs.
func VersionName(v uint16) string {
	for name, ver := range protocolVersions {
		if ver == v {
			return name
		}
	}
	return tls.VersionName(v)
}
