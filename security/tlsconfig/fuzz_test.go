package tlsconfig

import (
	"errors"
	"testing"
)

func FuzzPEMEntries(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n")
	f.Add("Bag Attributes\n x: y\n-----BEGIN ENCRYPTED PRIVATE KEY-----\r\nMIIB\r\n-----END ENCRYPTED PRIVATE KEY-----")
	f.Add("-----BEGIN CERTIFICATE----- MAA= -----END CERTIFICATE-----")
	f.Fuzz(func(t *testing.T, text string) {
		for _, p := range []*pemParser{certificateParser, privateKeyParser} {
			ders, err := p.entries(text)
			if err == nil && len(ders) == 0 {
				t.Fatalf("%s: no entries and no error", p.name)
			}
			if err != nil && ders != nil {
				t.Fatalf("%s: entries with an error", p.name)
			}
		}
	})
}

func FuzzDecryptPKCS8(f *testing.F) {
	// testdata/fuzz/FuzzDecryptPKCS8 holds openssl-made keys of each scheme.
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x00}, "")
	f.Fuzz(func(t *testing.T, der []byte, password string) {
		plain, err := decryptPKCS8(der, password)
		if err == nil && plain == nil {
			t.Fatal("nil key and no error")
		}
		if err != nil && isEncryptedPKCS8(der) && errors.Is(err, errNotEncrypted) {
			t.Fatalf("parses as encrypted but decryptPKCS8 says not: %v", err)
		}
	})
}

// FuzzStoreBytes feeds arbitrary bytes to the JKS and PKCS12 readers, as key
// store and as trust store, with and without a password.
func FuzzStoreBytes(f *testing.F) {
	f.Add([]byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 0}, "storepw")
	f.Add([]byte{0x30, 0x80}, "")
	// testdata/fuzz/FuzzStoreBytes holds keytool- and openssl-made stores.
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		s := storeFile{kind: "key store", typeProp: KeystoreType, locationProp: KeystoreLocation,
			passwordProp: KeystorePassword, path: "fuzz", password: password}
		format, err := s.format(data)
		if err != nil {
			return
		}
		certs, err := keyStoreFromBytes(s, data, format, "")
		if err == nil && len(certs) == 0 {
			t.Fatal("key store without keys and no error")
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("key store error without ErrConfig: %v", err)
		}
		s.kind, s.typeProp, s.locationProp, s.passwordProp = "trust store", TruststoreType, TruststoreLocation, TruststorePassword
		if _, err := trustStoreFromBytes(s, data, format); err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("trust store error without ErrConfig: %v", err)
		}
	})
}
