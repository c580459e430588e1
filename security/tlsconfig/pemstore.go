package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
)

// pemCertificates reads every CERTIFICATE entry of a PEM value (Kafka's
// PemStore.certs): at least one is required.
func pemCertificates(property, pem string) ([]*x509.Certificate, error) {
	ders, err := certificateParser.entries(pem)
	if errors.Is(err, errNoPEMEntries) {
		return nil, propErr(property, nil, "at least one certificate expected, but none found")
	}
	if err != nil {
		return nil, propErr(property, err, "invalid PEM certificates")
	}
	certs, err := parseCertificates(ders)
	if err != nil {
		return nil, propErr(property, err, "invalid PEM certificates")
	}
	return certs, nil
}

// pemKeyPair is Kafka's PemStore for a key store: one PRIVATE KEY entry
// (encrypted when keyPassword is set, plain otherwise) and the certificate
// chain, leaf first. chainProp and keyProp name the properties the two
// values came from, for errors; for a PEM key store file both are
// ssl.keystore.location.
func pemKeyPair(chainProp, chainPEM, keyProp, keyPEM, keyPassword string) (tls.Certificate, error) {
	ders, err := privateKeyParser.entries(keyPEM)
	if errors.Is(err, errNoPEMEntries) {
		return tls.Certificate{}, propErr(keyProp, nil, "private key not provided (no PRIVATE KEY entry)")
	}
	if err != nil {
		return tls.Certificate{}, propErr(keyProp, err, "invalid PEM private key")
	}
	if len(ders) != 1 {
		return tls.Certificate{}, propErr(keyProp, nil, "expected one private key, but found %d", len(ders))
	}
	der := ders[0]
	if keyPassword != "" {
		if !isEncryptedPKCS8(der) {
			return tls.Certificate{}, propErr(KeyPassword, nil, "is set, but the key in %s is not an encrypted PKCS#8 key (BEGIN ENCRYPTED PRIVATE KEY)", keyProp)
		}
		der, err = decryptPKCS8(der, keyPassword)
		if errors.Is(err, errWrongKeyPassword) {
			return tls.Certificate{}, propErr(KeyPassword, nil, "cannot decrypt the key in %s: wrong password", keyProp)
		}
		if err != nil {
			return tls.Certificate{}, propErr(keyProp, err, "cannot decrypt the private key")
		}
	}
	key, err := parsePrivateKey(der)
	if err != nil {
		if keyPassword != "" {
			// A wrong password can leave padding that happens to look right.
			return tls.Certificate{}, propErr(KeyPassword, err, "the key in %s did not decrypt to a private key (wrong password?)", keyProp)
		}
		return tls.Certificate{}, propErr(keyProp, err, "private key could not be loaded")
	}
	chain, err := pemCertificates(chainProp, chainPEM)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert, err := newCertificate(key, chain)
	if err != nil {
		return tls.Certificate{}, propErr(chainProp, err, "%s does not match %s", chainProp, keyProp)
	}
	return cert, nil
}
