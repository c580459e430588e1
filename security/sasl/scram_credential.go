package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"encoding/base64"
	"strconv"
	"strings"
)

// ScramCredential is what a broker stores for a SCRAM user (Kafka's
// ScramCredential): never the password, only the salt, the iteration count,
// StoredKey = H(HMAC(SaltedPassword, "Client Key")) to check a client proof,
// and ServerKey = HMAC(SaltedPassword, "Server Key") to sign the reply.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// NewScramCredential derives a credential from a password as Kafka's
// ScramFormatter does: SaltedPassword = Hi(password, salt, iterations), which
// is PBKDF2 with the mechanism's HMAC and one hash-sized block. The password
// is used as its UTF-8 bytes with no SASLprep, as Kafka's normalize does.
// iterations must be at least 1; bound it with ValidateIterations first when
// it comes from a client.
func NewScramCredential(mechanism, password string, salt []byte, iterations int) (ScramCredential, error) {
	m := lookupMech(mechanism)
	if m == nil {
		return ScramCredential{}, unsupportedMechanism(mechanism)
	}
	if iterations < 1 {
		return ScramCredential{}, errorString("SCRAM iterations must be positive, got " + strconv.Itoa(iterations))
	}
	salted, err := pbkdf2.Key(m.newHash, password, salt, iterations, m.size)
	if err != nil {
		return ScramCredential{}, err
	}
	return m.credential(salted, salt, iterations), nil
}

// ScramCredentialFromSaltedPassword builds a credential from an already
// salted password, which is what AlterUserScramCredentials upsertions carry
// (KIP-554); Kafka's ScramControlManager derives the keys the same way.
func ScramCredentialFromSaltedPassword(mechanism string, salted, salt []byte, iterations int) (ScramCredential, error) {
	m := lookupMech(mechanism)
	if m == nil {
		return ScramCredential{}, unsupportedMechanism(mechanism)
	}
	return m.credential(salted, salt, iterations), nil
}

func (m *scramMech) credential(salted, salt []byte, iterations int) ScramCredential {
	clientKey := m.hmac(salted, []byte("Client Key"))
	return ScramCredential{
		Salt:       append([]byte(nil), salt...),
		StoredKey:  m.hash(clientKey),
		ServerKey:  m.hmac(salted, []byte("Server Key")),
		Iterations: iterations,
	}
}

func (m *scramMech) hmac(key, msg []byte) []byte {
	h := hmac.New(m.newHash, key)
	h.Write(msg)
	return h.Sum(nil)
}

func (m *scramMech) hash(b []byte) []byte {
	h := m.newHash()
	h.Write(b)
	return h.Sum(nil)
}

// String is Kafka's ScramCredentialUtils.credentialToString, the form kept
// in ZooKeeper's /config/users entries:
// salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>.
func (c ScramCredential) String() string {
	enc := base64.StdEncoding
	return "salt=" + enc.EncodeToString(c.Salt) +
		",stored_key=" + enc.EncodeToString(c.StoredKey) +
		",server_key=" + enc.EncodeToString(c.ServerKey) +
		",iterations=" + strconv.Itoa(c.Iterations)
}

// ErrInvalidCredential is returned by ParseScramCredential. Kafka's text
// appends the whole input; ours does not, since the input holds key material
// and errors end up in logs.
var ErrInvalidCredential error = errorString("Credentials not valid")

// ParseScramCredential is Kafka's ScramCredentialUtils.credentialFromString:
// comma-separated key=value pairs (trailing empty pieces dropped, as Java's
// String.split does; a later duplicate key wins), exactly the four keys salt,
// stored_key, server_key and iterations, values in Java's basic Base64
// (padding optional) and a 32-bit decimal iteration count.
func ParseScramCredential(s string) (ScramCredential, error) {
	pieces := strings.Split(s, ",")
	for len(pieces) > 1 && pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	props := make(map[string]string, 4)
	for _, p := range pieces {
		i := strings.IndexByte(p, '=')
		if i <= 0 {
			return ScramCredential{}, ErrInvalidCredential
		}
		props[p[:i]] = p[i+1:]
	}
	if len(props) != 4 {
		return ScramCredential{}, ErrInvalidCredential
	}
	var c ScramCredential
	var err error
	for _, f := range []struct {
		key string
		dst *[]byte
	}{{"salt", &c.Salt}, {"stored_key", &c.StoredKey}, {"server_key", &c.ServerKey}} {
		v, ok := props[f.key]
		if !ok {
			return ScramCredential{}, ErrInvalidCredential
		}
		if *f.dst, err = javaBase64(v); err != nil {
			return ScramCredential{}, ErrInvalidCredential
		}
	}
	it, ok := props["iterations"]
	if !ok {
		return ScramCredential{}, ErrInvalidCredential
	}
	n, err := strconv.ParseInt(it, 10, 32)
	if err != nil {
		return ScramCredential{}, ErrInvalidCredential
	}
	c.Iterations = int(n)
	return c, nil
}

// javaBase64 decodes as java.util.Base64.getDecoder(): the standard alphabet,
// no line breaks, '=' padding optional but correct when present.
func javaBase64(s string) ([]byte, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, errorString("line break in base64")
	}
	if len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	if strings.IndexByte(s, '=') >= 0 {
		return nil, errorString("bad base64 padding")
	}
	return base64.RawStdEncoding.DecodeString(s)
}
