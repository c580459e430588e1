package tlsconfig

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
	"unicode/utf16"
)

// Encrypted PKCS#8 keys (RFC 5958 EncryptedPrivateKeyInfo), as Kafka's
// PemStore decrypts them through javax.crypto.EncryptedPrivateKeyInfo:
//   - PBES2 (RFC 8018): a PBKDF2 key and an AES-CBC or 3DES-CBC cipher,
//     what "openssl pkcs8 -topk8" writes by default;
//   - pbeWithSHAAnd3-KeyTripleDES-CBC (RFC 7292), Java's PBEWithSHA1AndDESede
//     and the default of older OpenSSL, which Kafka's own tests use.

var (
	oidPBES2          = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidScrypt         = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11}
	oidHMACWithSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACWithSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACWithSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACWithSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC      = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC     = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
	oidPKCS12PBE      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1}
	oidPBEWithSHA3DES = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 3}
	oidPKCS5PBES1     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5}
)

type encryptedPrivateKeyInfo struct {
	Algorithm     pkix.AlgorithmIdentifier
	EncryptedData []byte
}

type pbes2Params struct {
	KeyDerivationFunc pkix.AlgorithmIdentifier
	EncryptionScheme  pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                      `asn1:"optional"`
	PRF            pkix.AlgorithmIdentifier `asn1:"optional"`
}

// errNotEncrypted says the DER is not an EncryptedPrivateKeyInfo at all.
var errNotEncrypted = errors.New("not an encrypted PKCS#8 key")

// errWrongKeyPassword is the likely meaning of bad padding or an
// undecodable result.
var errWrongKeyPassword = errors.New("wrong password (decryption failed)")

// isEncryptedPKCS8 reports whether der parses as an EncryptedPrivateKeyInfo.
func isEncryptedPKCS8(der []byte) bool {
	var info encryptedPrivateKeyInfo
	rest, err := asn1.Unmarshal(der, &info)
	return err == nil && len(rest) == 0 && len(info.Algorithm.Algorithm) > 0
}

// decryptPKCS8 returns the PKCS#8 PrivateKeyInfo inside an encrypted one.
// The password is used as UTF-8 bytes, as Java's PBKDF2 and OpenSSL do.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	rest, err := asn1.Unmarshal(der, &info)
	if err != nil || len(rest) != 0 {
		return nil, errNotEncrypted
	}
	var block cipher.Block
	var iv []byte
	switch alg := info.Algorithm.Algorithm; {
	case alg.Equal(oidPBES2):
		var params pbes2Params
		if rest, err := asn1.Unmarshal(info.Algorithm.Parameters.FullBytes, &params); err != nil || len(rest) != 0 {
			return nil, fmt.Errorf("malformed PBES2 parameters")
		}
		newCipher, keyLen, cbcIV, err := pbes2Cipher(params.EncryptionScheme)
		if err != nil {
			return nil, err
		}
		key, err := pbes2Key(params.KeyDerivationFunc, password, keyLen)
		if err != nil {
			return nil, err
		}
		if block, err = newCipher(key); err != nil {
			return nil, err
		}
		iv = cbcIV
	case alg.Equal(oidPBEWithSHA3DES):
		var err error
		if block, iv, err = pkcs12TripleDES(info.Algorithm.Parameters.FullBytes, password); err != nil {
			return nil, err
		}
	case len(alg) == len(oidPKCS12PBE)+1 && alg[:len(oidPKCS12PBE)].Equal(oidPKCS12PBE),
		len(alg) == len(oidPKCS5PBES1)+1 && alg[:len(oidPKCS5PBES1)].Equal(oidPKCS5PBES1):
		return nil, fmt.Errorf("unsupported legacy key encryption %v (PBES1 with RC2, RC4 or DES); re-encrypt the key with PBES2: openssl pkcs8 -topk8 -v2 aes-256-cbc", alg)
	default:
		return nil, fmt.Errorf("unsupported key encryption algorithm %v (want PBES2)", alg)
	}
	data := info.EncryptedData
	bs := block.BlockSize()
	if len(iv) != bs {
		return nil, fmt.Errorf("malformed PBES2 parameters: IV of %d bytes for a %d-byte block", len(iv), bs)
	}
	if len(data) == 0 || len(data)%bs != 0 {
		return nil, fmt.Errorf("encrypted key length %d is not a multiple of the cipher block size", len(data))
	}
	plain := make([]byte, len(data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, data)
	// PKCS#5 padding: n bytes of value n.
	n := int(plain[len(plain)-1])
	if n == 0 || n > bs {
		return nil, errWrongKeyPassword
	}
	for _, c := range plain[len(plain)-n:] {
		if int(c) != n {
			return nil, errWrongKeyPassword
		}
	}
	return plain[:len(plain)-n], nil
}

func pbes2Cipher(scheme pkix.AlgorithmIdentifier) (func([]byte) (cipher.Block, error), int, []byte, error) {
	var iv []byte
	if rest, err := asn1.Unmarshal(scheme.Parameters.FullBytes, &iv); err != nil || len(rest) != 0 {
		return nil, 0, nil, fmt.Errorf("malformed PBES2 cipher parameters (want an IV)")
	}
	switch alg := scheme.Algorithm; {
	case alg.Equal(oidAES128CBC):
		return aes.NewCipher, 16, iv, nil
	case alg.Equal(oidAES192CBC):
		return aes.NewCipher, 24, iv, nil
	case alg.Equal(oidAES256CBC):
		return aes.NewCipher, 32, iv, nil
	case alg.Equal(oidDESEDE3CBC):
		return des.NewTripleDESCipher, 24, iv, nil
	default:
		return nil, 0, nil, fmt.Errorf("unsupported PBES2 cipher %v (want AES-CBC or DES-EDE3-CBC)", alg)
	}
}

func pbes2Key(kdf pkix.AlgorithmIdentifier, password string, keyLen int) ([]byte, error) {
	if kdf.Algorithm.Equal(oidScrypt) {
		return nil, errors.New("unsupported key derivation scrypt (want PBKDF2, as Java)")
	}
	if !kdf.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("unsupported key derivation %v (want PBKDF2)", kdf.Algorithm)
	}
	var params pbkdf2Params
	if rest, err := asn1.Unmarshal(kdf.Parameters.FullBytes, &params); err != nil || len(rest) != 0 {
		return nil, errors.New("malformed PBKDF2 parameters")
	}
	if params.KeyLength != 0 && params.KeyLength != keyLen {
		return nil, fmt.Errorf("PBKDF2 key length %d does not fit the cipher's %d", params.KeyLength, keyLen)
	}
	// A cap on the work a config can ask for; OpenSSL writes 2048, keytool
	// 10000, and 10 million is already seconds of CPU.
	if params.IterationCount < 1 || params.IterationCount > 10_000_000 {
		return nil, fmt.Errorf("PBKDF2 iteration count %d out of range", params.IterationCount)
	}
	var h func() hash.Hash
	switch prf := params.PRF.Algorithm; {
	case len(prf) == 0, prf.Equal(oidHMACWithSHA1): // the default PRF
		h = sha1.New
	case prf.Equal(oidHMACWithSHA224):
		h = sha256.New224
	case prf.Equal(oidHMACWithSHA256):
		h = sha256.New
	case prf.Equal(oidHMACWithSHA384):
		h = sha512.New384
	case prf.Equal(oidHMACWithSHA512):
		h = sha512.New
	default:
		return nil, fmt.Errorf("unsupported PBKDF2 PRF %v", prf)
	}
	return pbkdf2.Key(h, password, params.Salt, params.IterationCount, keyLen)
}

type pkcs12PBEParams struct {
	Salt       []byte
	Iterations int
}

// pkcs12TripleDES derives the 3DES key and IV of
// pbeWithSHAAnd3-KeyTripleDES-CBC with the PKCS#12 key derivation.
func pkcs12TripleDES(paramsDER []byte, password string) (cipher.Block, []byte, error) {
	var params pkcs12PBEParams
	if rest, err := asn1.Unmarshal(paramsDER, &params); err != nil || len(rest) != 0 {
		return nil, nil, errors.New("malformed PKCS#12 PBE parameters")
	}
	if params.Iterations < 1 || params.Iterations > 10_000_000 {
		return nil, nil, fmt.Errorf("PKCS#12 PBE iteration count %d out of range", params.Iterations)
	}
	pw := bmpPassword(password)
	key := pkcs12KDF(params.Salt, pw, params.Iterations, 1, 24)
	iv := pkcs12KDF(params.Salt, pw, params.Iterations, 2, 8)
	block, err := des.NewTripleDESCipher(key)
	if err != nil {
		return nil, nil, err
	}
	return block, iv, nil
}

// bmpPassword is a password as PKCS#12 hashes it: UTF-16BE code units and
// a terminating zero unit (RFC 7292, appendix B.1).
func bmpPassword(password string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(password)) {
		out = append(out, byte(u>>8), byte(u))
	}
	return append(out, 0, 0)
}

// pkcs12KDF is the key derivation of RFC 7292, appendix B.2, with SHA-1
// (u = 20, v = 64): id 1 derives key bytes, 2 the IV.
func pkcs12KDF(salt, password []byte, iterations int, id byte, size int) []byte {
	const u, v = sha1.Size, 64
	fill := func(p []byte) []byte {
		if len(p) == 0 {
			return nil
		}
		out := make([]byte, (len(p)+v-1)/v*v)
		for i := range out {
			out[i] = p[i%len(p)]
		}
		return out
	}
	d := make([]byte, v)
	for i := range d {
		d[i] = id
	}
	in := append(fill(salt), fill(password)...)
	var out []byte
	for len(out) < size {
		h := sha1.New()
		h.Write(d)
		h.Write(in)
		a := h.Sum(nil)
		for range iterations - 1 {
			sum := sha1.Sum(a)
			a = sum[:]
		}
		out = append(out, a...)
		// I_j = (I_j + B + 1) mod 2^(8v), with B = A repeated to v bytes.
		b := make([]byte, v)
		for i := range b {
			b[i] = a[i%u]
		}
		for j := 0; j < len(in); j += v {
			carry := 1
			for k := v - 1; k >= 0; k-- {
				sum := int(in[j+k]) + int(b[k]) + carry
				in[j+k] = byte(sum)
				carry = sum >> 8
			}
		}
	}
	return out[:size]
}
