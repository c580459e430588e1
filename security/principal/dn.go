package principal

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// The DN rendering follows Java's X500Principal.getName() (RFC 2253 form),
// which is what Kafka hands to the SSL principal mapper: the JDK's X500Name,
// RDN and AVA classes (sun.security.x509). Every rule below was checked
// against a JVM (see dn_java_test.go, which runs one).

// rfc2253Keywords are the attribute types Java names with a keyword in RFC
// 2253 output (AVAKeyword entries marked rfc2253Compliant); every other type
// is written as its dotted OID with a #hex DER value.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// ASN.1 universal tags of the string types Java renders as text in RFC 2253
// output (AVA.isDerString, non-canonical); any other tag is written as hex.
const (
	tagUTF8String      = 12
	tagPrintableString = 19
	tagT61String       = 20
	tagIA5String       = 22
	tagGeneralString   = 27
	tagBMPString       = 30
)

// rfc2253Escapees are the characters Java escapes with a backslash anywhere
// in a value (AVA.toRFC2253String). Note '=' and '#' are escaped at every
// position, not only where RFC 2253 requires it.
const rfc2253Escapees = ",=+<>#;\"\\"

type attributeTypeAndValue struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

// relativeDistinguishedNameSET is a SET OF; encoding/asn1 treats a slice
// type whose name ends in SET that way.
type relativeDistinguishedNameSET []attributeTypeAndValue

// ErrDistinguishedName is wrapped by FormatDN errors.
var ErrDistinguishedName = errors.New("malformed distinguished name")

// DistinguishedName renders the certificate's subject as Java's
// X500Principal.getName() does: the most specific RDN first
// ("CN=client,OU=eng,O=kbroker,C=US"), RFC 2253 escaping, multi-valued RDNs
// joined by '+' in their encoded order. A nil certificate gives "". A
// subject that cannot be decoded (Go's x509 parser already accepted it, so
// this should not happen) falls back to Go's own rendering.
func DistinguishedName(cert *x509.Certificate) string {
	if cert == nil {
		return ""
	}
	dn, err := FormatDN(cert.RawSubject)
	if err != nil {
		return cert.Subject.String()
	}
	return dn
}

// FormatDN renders a DER-encoded X.501 Name (an RDNSequence, such as a
// certificate's RawSubject) as DistinguishedName does.
func FormatDN(der []byte) (string, error) {
	var rdns []relativeDistinguishedNameSET
	rest, err := asn1.Unmarshal(der, &rdns)
	if err != nil {
		return "", errors.Join(ErrDistinguishedName, err)
	}
	if len(rest) != 0 {
		return "", errors.Join(ErrDistinguishedName, errors.New("trailing data after the name"))
	}
	for _, rdn := range rdns {
		for _, atv := range rdn {
			if err := checkBMPString(atv.Value); err != nil {
				return "", err
			}
		}
	}
	var b strings.Builder
	// X500Name.getRFC2253Name writes the sequence back to front.
	for i := len(rdns) - 1; i >= 0; i-- {
		if i != len(rdns)-1 {
			b.WriteByte(',')
		}
		for j, atv := range rdns[i] {
			if j > 0 {
				b.WriteByte('+')
			}
			writeAVA(&b, atv)
		}
	}
	return b.String(), nil
}

func writeAVA(b *strings.Builder, atv attributeTypeAndValue) {
	keyword, known := rfc2253Keywords[atv.Type.String()]
	if !known {
		keyword = atv.Type.String()
	}
	b.WriteString(keyword)
	b.WriteByte('=')
	text, isString := valueString(atv.Value)
	if !known || !isString {
		// Java writes the whole DER encoding (tag, length, contents) in
		// lower-case hex.
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(atv.Value.FullBytes))
		return
	}
	writeEscaped(b, text)
}

// valueString decodes a string-typed value with the charset Java's
// AVA.getCharset picks for its tag: BMPString as UTF-16BE, UTF8String as
// UTF-8, and the 8-bit types (PrintableString, T61String, IA5String,
// GeneralString) as ISO-8859-1, so that bytes outside their nominal
// alphabet still come out as characters. Ill-formed input is replaced as
// the JDK's decoders replace it. JDKs before the JDK-8349890 change (for
// example 17.0.15) read every type as UTF-8; current 17, 21 and 25
// releases decode per tag, and those are what a Kafka broker runs on.
func valueString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal || v.IsCompound {
		return "", false
	}
	switch v.Tag {
	case tagPrintableString, tagIA5String, tagGeneralString, tagT61String:
		return decodeLatin1(v.Bytes), true
	case tagBMPString:
		return javaDecodeUTF16BE(v.Bytes), true
	case tagUTF8String:
		return javaDecodeUTF8(v.Bytes), true
	}
	return "", false
}

// checkBMPString rejects a BMPString that decodes to a character outside
// the Basic Multilingual Plane, as Java's AVA constructor does
// (DerValue.validateBMPString): the JDK will not parse such a name at all.
// Lone surrogates are not an error there, having become U+FFFD in decoding.
func checkBMPString(v asn1.RawValue) error {
	if v.Class != asn1.ClassUniversal || v.IsCompound || v.Tag != tagBMPString {
		return nil
	}
	for i, c := range []rune(javaDecodeUTF16BE(v.Bytes)) {
		if c > 0xffff {
			return fmt.Errorf("%w: character outside the BMP in a BMPString at index %d", ErrDistinguishedName, i)
		}
	}
	return nil
}

// decodeLatin1 maps each byte to the code point of the same value.
func decodeLatin1(p []byte) string {
	var b strings.Builder
	b.Grow(len(p))
	for _, c := range p {
		b.WriteRune(rune(c))
	}
	return b.String()
}

// writeEscaped applies Java's AVA.toRFC2253String escaping: a backslash
// before every escapee, "\00" for NUL, and a backslash before each leading
// or trailing space or carriage return.
func writeEscaped(b *strings.Builder, value string) {
	var chars []rune
	for _, c := range value {
		switch {
		case strings.ContainsRune(rfc2253Escapees, c):
			chars = append(chars, '\\', c)
		case c == 0:
			chars = append(chars, '\\', '0', '0')
		default:
			chars = append(chars, c)
		}
	}
	isPad := func(c rune) bool { return c == ' ' || c == '\r' }
	lead := 0
	for lead < len(chars) && isPad(chars[lead]) {
		lead++
	}
	trail := len(chars) - 1
	for trail >= 0 && isPad(chars[trail]) {
		trail--
	}
	for i, c := range chars {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
}
