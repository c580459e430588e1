package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
)

// keyStore builds the key material from the ssl.keystore.* properties with
// the checks of Kafka's DefaultSslEngineFactory.createKeystore, in its
// order. It returns nil when no key store is configured.
func keyStore(p props) ([]tls.Certificate, error) {
	typ := p.get(KeystoreType)
	if typ == "" {
		typ = DefaultStoreType
	}
	path, password, keyPassword := p.get(KeystoreLocation), p.secret(KeystorePassword), p.secret(KeyPassword)
	key, chain := p.secret(KeystoreKey), p.secret(KeystoreCertificateChain)
	switch {
	case key != "":
		switch {
		case typ != storeTypePEM:
			return nil, propErr(KeystoreKey, nil, "a private key can be given only with %s=PEM, but it is %s", KeystoreType, typ)
		case chain == "":
			return nil, propErr(KeystoreCertificateChain, nil, "is not set, but %s is", KeystoreKey)
		case path != "":
			return nil, propErr(KeystoreLocation, nil, "is set together with %s; give one or the other", KeystoreKey)
		case password != "":
			return nil, propErr(KeystorePassword, nil, "cannot be set with PEM key material, only %s may be", KeyPassword)
		}
		cert, err := pemKeyPair(KeystoreCertificateChain, chain, KeystoreKey, key, keyPassword)
		if err != nil {
			return nil, err
		}
		return []tls.Certificate{cert}, nil
	case chain != "":
		return nil, propErr(KeystoreKey, nil, "is not set, but %s is", KeystoreCertificateChain)
	case typ == storeTypePEM && path != "":
		if password != "" {
			return nil, propErr(KeystorePassword, nil, "cannot be set for a PEM key store, only %s may be", KeyPassword)
		}
		// Kafka's FileBasedPemStore: key and chain in the one file.
		pem, err := readPEMFile(KeystoreLocation, "key store", path)
		if err != nil {
			return nil, err
		}
		cert, err := pemKeyPair(KeystoreLocation, pem, KeystoreLocation, pem, keyPassword)
		if err != nil {
			return nil, err
		}
		return []tls.Certificate{cert}, nil
	case path == "" && password != "":
		return nil, propErr(KeystoreLocation, nil, "is not set, but %s is", KeystorePassword)
	case path != "" && password == "":
		return nil, propErr(KeystorePassword, nil, "is not set, but %s is", KeystoreLocation)
	case path != "":
		return keyStoreCertificates(storeFile{
			kind: "key store", typeProp: KeystoreType, locationProp: KeystoreLocation,
			passwordProp: KeystorePassword, path: path, password: password,
		}, typ, keyPassword)
	}
	return nil, nil
}

// trustStore builds the trust anchors from the ssl.truststore.* properties
// with the checks of Kafka's DefaultSslEngineFactory.createTruststore. It
// returns nil when no trust store is configured; the caller then trusts
// the system roots, as Java falls back to the JDK's cacerts.
func trustStore(p props) (*x509.CertPool, error) {
	typ := p.get(TruststoreType)
	if typ == "" {
		typ = DefaultStoreType
	}
	path, password, pem := p.get(TruststoreLocation), p.secret(TruststorePassword), p.secret(TruststoreCertificates)
	var certs []*x509.Certificate
	var err error
	switch {
	case pem != "":
		switch {
		case typ != storeTypePEM:
			return nil, propErr(TruststoreCertificates, nil, "certificates can be given only with %s=PEM, but it is %s", TruststoreType, typ)
		case path != "":
			return nil, propErr(TruststoreLocation, nil, "is set together with %s; give one or the other", TruststoreCertificates)
		case password != "":
			return nil, propErr(TruststorePassword, nil, "cannot be set for PEM trust certificates")
		}
		certs, err = pemCertificates(TruststoreCertificates, pem)
	case typ == storeTypePEM && path != "":
		if password != "" {
			return nil, propErr(TruststorePassword, nil, "cannot be set for a PEM trust store")
		}
		var text string
		text, err = readPEMFile(TruststoreLocation, "trust store", path)
		if err == nil {
			certs, err = pemCertificates(TruststoreLocation, text)
		}
	case path == "" && password != "":
		return nil, propErr(TruststoreLocation, nil, "is not set, but %s is", TruststorePassword)
	case path != "":
		certs, err = trustStoreCertificates(storeFile{
			kind: "trust store", typeProp: TruststoreType, locationProp: TruststoreLocation,
			passwordProp: TruststorePassword, path: path, password: password,
		}, typ)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		// Java's PKIX trust manager refuses an empty set of anchors.
		return nil, propErr(TruststoreLocation, nil, "the trust store %s has no trusted certificates", path)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

func readPEMFile(property, kind, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", propErr(property, nil, "%s file %s does not exist", kind, path)
		}
		return "", propErr(property, err, "cannot read %s file %s", kind, path)
	}
	return string(data), nil
}
