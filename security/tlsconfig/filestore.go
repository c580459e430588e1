package tlsconfig

import (
	"bytes"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// The file-based key and trust stores, as Kafka's
// DefaultSslEngineFactory.FileBasedStore loads them with
// KeyStore.getInstance(type).load(file, password).
//
// Since Java 9 a "JKS" KeyStore also loads PKCS12 files and a "PKCS12" one
// also loads JKS files (keystore.type.compat), so a Kafka config that says
// ssl.keystore.type=JKS (the default) over a .p12 file works; the format is
// therefore told from the file's first bytes here, not from the type.

const (
	jksMagic   = 0xfeedfeed
	jceksMagic = 0xcececece
)

type storeFormat int

const (
	formatJKS storeFormat = iota
	formatPKCS12
)

// storeFile names the properties one store's errors are reported under.
type storeFile struct {
	kind         string // "key store" or "trust store"
	typeProp     string
	locationProp string
	passwordProp string
	path         string
	password     string // "" when unset
}

func (s storeFile) read(typ string) ([]byte, storeFormat, error) {
	switch strings.ToUpper(typ) {
	case "JKS", "PKCS12":
	default:
		return nil, 0, propErr(s.typeProp, nil, "unsupported %s type %q (JKS, PKCS12 or PEM)", s.kind, typ)
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, propErr(s.locationProp, nil, "%s file %s does not exist", s.kind, s.path)
		}
		return nil, 0, propErr(s.locationProp, err, "cannot read %s file %s", s.kind, s.path)
	}
	format, err := s.format(data)
	return data, format, err
}

// format tells JKS from PKCS12 by the first bytes.
func (s storeFile) format(data []byte) (storeFormat, error) {
	if len(data) >= 4 {
		switch binary.BigEndian.Uint32(data) {
		case jksMagic:
			return formatJKS, nil
		case jceksMagic:
			return 0, propErr(s.typeProp, nil, "%s %s is a JCEKS file, which is not supported; convert it to PKCS12 with keytool -importkeystore", s.kind, s.path)
		}
	}
	if len(data) == 0 || data[0] != 0x30 {
		return 0, propErr(s.locationProp, nil, "%s %s is neither a JKS nor a PKCS12 file", s.kind, s.path)
	}
	return formatPKCS12, nil
}

// jksPassword is how Java feeds a password to JKS: UTF-16 code units, which
// keystore-go builds by putting a zero byte before each byte it is given.
// That is right for passwords of Latin-1 characters, so those are passed
// as Latin-1 bytes; anything else cannot be expressed.
func jksPassword(property, password string) ([]byte, error) {
	out := make([]byte, 0, len(password))
	for _, r := range password {
		if r > 0xff {
			return nil, propErr(property, nil, "JKS passwords with characters beyond Latin-1 are not supported")
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// withEmptyPasswordDigest rewrites a JKS file's trailing SHA-1 integrity
// digest to the one an empty password gives, so that keystore-go (which
// always checks the digest) loads it. Java skips the check when a trust
// store has no password ("integrity checking is disabled", Kafka's
// ssl.truststore.password documentation), and this is the same.
func withEmptyPasswordDigest(data []byte) []byte {
	if len(data) < sha1.Size {
		return data
	}
	body := data[:len(data)-sha1.Size]
	h := sha1.New()
	h.Write([]byte("Mighty Aphrodite")) // the JKS whitener, after the (empty) password
	h.Write(body)
	return append(slices.Clip(body), h.Sum(nil)...)
}

func (s storeFile) loadJKS(data []byte) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithOrderedAliases(), keystore.WithCaseExactAliases())
	verify := s.password != ""
	if !verify {
		data = withEmptyPasswordDigest(data)
	}
	pw, err := jksPassword(s.passwordProp, s.password)
	if err != nil {
		return ks, err
	}
	if err := checkJKSLayout(data); err != nil {
		return ks, propErr(s.locationProp, err, "cannot load JKS %s %s", s.kind, s.path)
	}
	if err := ks.Load(bytes.NewReader(data), pw); err != nil {
		if verify && strings.Contains(err.Error(), "invalid digest") {
			return ks, propErr(s.passwordProp, nil, "wrong password for %s %s (integrity check failed)", s.kind, s.path)
		}
		return ks, propErr(s.locationProp, err, "cannot load JKS %s %s", s.kind, s.path)
	}
	return ks, nil
}

// keyStoreCertificates loads the key entries of a JKS or PKCS12 key store.
// keyPassword is ssl.key.password, which defaults to the store password
// (FileBasedStore.keyPassword). Every key entry becomes a certificate, and
// Go's TLS picks among them per handshake as Java's key manager does.
func keyStoreCertificates(s storeFile, typ, keyPassword string) ([]tls.Certificate, error) {
	data, format, err := s.read(typ)
	if err != nil {
		return nil, err
	}
	return keyStoreFromBytes(s, data, format, keyPassword)
}

func keyStoreFromBytes(s storeFile, data []byte, format storeFormat, keyPassword string) ([]tls.Certificate, error) {
	keyProp := KeyPassword
	if keyPassword == "" {
		keyPassword, keyProp = s.password, s.passwordProp
	}
	if format == formatPKCS12 {
		return pkcs12KeyStore(s, data, keyProp, keyPassword)
	}
	ks, err := s.loadJKS(data)
	if err != nil {
		return nil, err
	}
	var certs []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		pw, err := jksPassword(keyProp, keyPassword)
		if err != nil {
			return nil, err
		}
		entry, err := privateKeyEntry(ks, alias, pw)
		if err != nil {
			hint := ""
			if keyProp == s.passwordProp {
				hint = " (set ssl.key.password if the key has a password of its own)"
			}
			return nil, propErr(keyProp, nil, "cannot recover the key %q in %s %s: wrong password%s", alias, s.kind, s.path, hint)
		}
		key, err := parsePrivateKey(entry.PrivateKey)
		if err != nil {
			return nil, propErr(s.locationProp, err, "key %q in %s %s", alias, s.kind, s.path)
		}
		chain, err := jksChain(entry.CertificateChain)
		if err != nil {
			return nil, propErr(s.locationProp, err, "key %q in %s %s", alias, s.kind, s.path)
		}
		cert, err := newCertificate(key, chain)
		if err != nil {
			return nil, propErr(s.locationProp, err, "key %q in %s %s", alias, s.kind, s.path)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, propErr(s.locationProp, nil, "%s %s has no private key entry", s.kind, s.path)
	}
	return certs, nil
}

func jksChain(chain []keystore.Certificate) ([]*x509.Certificate, error) {
	ders := make([][]byte, 0, len(chain))
	for _, c := range chain {
		if c.Type != "X.509" && c.Type != "X509" {
			return nil, fmt.Errorf("certificate of type %q", c.Type)
		}
		ders = append(ders, c.Content)
	}
	return parseCertificates(ders)
}

func pkcs12KeyStore(s storeFile, data []byte, keyProp, keyPassword string) ([]tls.Certificate, error) {
	if keyPassword != s.password {
		// keytool keeps one password for a PKCS12 file and its keys, and
		// Java fails to recover a key with any other.
		return nil, propErr(KeyPassword, nil, "differs from %s, but the keys of PKCS12 %s %s are protected by the store password", s.passwordProp, s.kind, s.path)
	}
	key, leaf, others, err := pkcs12.DecodeChain(data, s.password)
	if err != nil {
		return nil, pkcs12Error(s, err)
	}
	signer, err := asSigner(key)
	if err != nil {
		return nil, propErr(s.locationProp, err, "PKCS12 %s %s", s.kind, s.path)
	}
	chain := orderChain(signer, append([]*x509.Certificate{leaf}, others...))
	cert, err := newCertificate(signer, chain)
	if err != nil {
		return nil, propErr(s.locationProp, err, "PKCS12 %s %s", s.kind, s.path)
	}
	return []tls.Certificate{cert}, nil
}

func pkcs12Error(s storeFile, err error) error {
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword) && s.password == "":
		return propErr(s.passwordProp, nil, "PKCS12 %s %s needs a password", s.kind, s.path)
	case errors.Is(err, pkcs12.ErrIncorrectPassword), errors.Is(err, pkcs12.ErrDecryption):
		return propErr(s.passwordProp, nil, "wrong password for PKCS12 %s %s", s.kind, s.path)
	case strings.Contains(err.Error(), "exactly one key bag"):
		return propErr(s.locationProp, nil, "PKCS12 %s %s holds more than one private key; only one is supported", s.kind, s.path)
	case strings.Contains(err.Error(), "private key missing"):
		return propErr(s.locationProp, nil, "PKCS12 %s %s has no private key entry", s.kind, s.path)
	}
	return propErr(s.locationProp, err, "cannot load PKCS12 %s %s", s.kind, s.path)
}

// trustStoreCertificates loads the trust anchors of a JKS or PKCS12 trust
// store the way Java's TrustManagerFactory reads a KeyStore: every trusted
// certificate entry, and the first certificate of every key entry.
func trustStoreCertificates(s storeFile, typ string) ([]*x509.Certificate, error) {
	data, format, err := s.read(typ)
	if err != nil {
		return nil, err
	}
	return trustStoreFromBytes(s, data, format)
}

func trustStoreFromBytes(s storeFile, data []byte, format storeFormat) ([]*x509.Certificate, error) {
	if format == formatPKCS12 {
		return pkcs12TrustStore(s, data)
	}
	ks, err := s.loadJKS(data)
	if err != nil {
		return nil, err
	}
	var ders [][]byte
	for _, alias := range ks.Aliases() {
		switch {
		case ks.IsTrustedCertificateEntry(alias):
			e, err := ks.GetTrustedCertificateEntry(alias)
			if err != nil {
				return nil, propErr(s.locationProp, err, "entry %q of %s %s", alias, s.kind, s.path)
			}
			ders = append(ders, e.Certificate.Content)
		case ks.IsPrivateKeyEntry(alias):
			chain, err := ks.GetPrivateKeyEntryCertificateChain(alias)
			if err == nil && len(chain) > 0 {
				ders = append(ders, chain[0].Content)
			}
		}
	}
	certs, err := parseCertificates(ders)
	if err != nil {
		return nil, propErr(s.locationProp, err, "%s %s", s.kind, s.path)
	}
	return certs, nil
}

// pkcs12TrustStore reads a PKCS12 trust store. Java takes as trusted only
// the certificates keytool marks with its trusted-key-usage attribute
// (which go-pkcs12's DecodeTrustStore reads) plus the certificate of a key
// entry; a PKCS12 file made by "openssl pkcs12 -export" without
// -jdktrust has none, and Java then has no trust anchors.
func pkcs12TrustStore(s storeFile, data []byte) ([]*x509.Certificate, error) {
	certs, err := pkcs12.DecodeTrustStore(data, s.password)
	if err == nil {
		return certs, nil
	}
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
		return nil, pkcs12Error(s, err)
	}
	// Not a certificates-only file: a key entry's certificate is a trust
	// anchor.
	if _, leaf, _, err := pkcs12.DecodeChain(data, s.password); err == nil {
		return []*x509.Certificate{leaf}, nil
	}
	if strings.Contains(err.Error(), "not marked as trusted") {
		return nil, propErr(s.locationProp, nil, "PKCS12 %s %s has certificates that are not marked as trusted for Java; "+
			"import them with keytool -importcert (or openssl pkcs12 -export -jdktrust anyExtendedKeyUsage)", s.kind, s.path)
	}
	return nil, pkcs12Error(s, err)
}

// privateKeyEntry is ks.GetPrivateKeyEntry, whose key decryption indexes
// by lengths taken from the entry: a key entry too short for its salt and
// digest panics there instead of failing, so the panic becomes an error.
func privateKeyEntry(ks keystore.KeyStore, alias string, pw []byte) (e keystore.PrivateKeyEntry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed key entry %q: %v", alias, r)
		}
	}()
	return ks.GetPrivateKeyEntry(alias, pw)
}
