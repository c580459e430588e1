package tlsconfig

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// parsePrivateKey reads an unencrypted PKCS#8 key, the only form Kafka's
// PemStore accepts (it tries the RSA, DSA and EC key factories on a
// PKCS8EncodedKeySpec). The older "RSA PRIVATE KEY" and "EC PRIVATE KEY"
// forms get an error that says how to convert them.
func parsePrivateKey(der []byte) (crypto.Signer, error) {
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		if _, err1 := x509.ParsePKCS1PrivateKey(der); err1 == nil {
			return nil, errors.New("the key is in PKCS#1 form (BEGIN RSA PRIVATE KEY); Kafka needs PKCS#8: convert it with openssl pkcs8 -topk8")
		}
		if _, err1 := x509.ParseECPrivateKey(der); err1 == nil {
			return nil, errors.New("the key is in SEC 1 form (BEGIN EC PRIVATE KEY); Kafka needs PKCS#8: convert it with openssl pkcs8 -topk8")
		}
		if isEncryptedPKCS8(der) {
			return nil, errors.New("the key is encrypted, and no ssl.key.password is set")
		}
		return nil, fmt.Errorf("not a PKCS#8 private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T key cannot sign TLS handshakes", key)
	}
	return signer, nil
}

// newCertificate pairs a key with its chain (leaf first) and checks that the
// leaf holds the key's public half; Java would find that out only at the
// first handshake.
func newCertificate(key crypto.Signer, chain []*x509.Certificate) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("no certificate for the private key")
	}
	if !publicKeyMatches(key, chain[0]) {
		return tls.Certificate{}, fmt.Errorf("the private key does not belong to the certificate %q", chain[0].Subject)
	}
	c := tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, cert := range chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c, nil
}

func publicKeyMatches(key crypto.Signer, cert *x509.Certificate) bool {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	return ok && pub.Equal(cert.PublicKey)
}

// orderChain picks the certificate of key out of certs and follows issuers
// from it, giving the chain leaf first, the way a Java key entry's chain
// reads. Certificates that are not on the path are left out.
func orderChain(key crypto.Signer, certs []*x509.Certificate) []*x509.Certificate {
	var chain []*x509.Certificate
	for _, c := range certs {
		if publicKeyMatches(key, c) {
			chain = append(chain, c)
			break
		}
	}
	if chain == nil {
		return nil
	}
	used := map[*x509.Certificate]bool{chain[0]: true}
	for len(chain) < len(certs) {
		last := chain[len(chain)-1]
		if bytes.Equal(last.RawIssuer, last.RawSubject) {
			break // self-issued: the top of the chain
		}
		var next *x509.Certificate
		for _, c := range certs {
			if !used[c] && bytes.Equal(c.RawSubject, last.RawIssuer) && last.CheckSignatureFrom(c) == nil {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		used[next] = true
		chain = append(chain, next)
	}
	return chain
}

func parseCertificates(ders [][]byte) ([]*x509.Certificate, error) {
	certs := make([]*x509.Certificate, 0, len(ders))
	for i, der := range ders {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("certificate %d: %w", i+1, err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

func asSigner(key any) (crypto.Signer, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a %T key cannot sign TLS handshakes", key)
	}
	return signer, nil
}
