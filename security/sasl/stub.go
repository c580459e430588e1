// Placeholder until the real package is merged; do not build on it.
package sasl

const (
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)
const MaxScramIterations = 16384

func MinScramIterations(string) int { return 4096 }

type ScramCredential struct {
	Salt, StoredKey, ServerKey []byte
	Iterations                 int
}

func (ScramCredential) String() string                     { return "" }
func ParseScramCredential(string) (ScramCredential, error) { return ScramCredential{}, nil }
func MechanismType(string) (int8, bool)                    { return 0, false }
func MechanismName(int8) (string, bool)                    { return "", false }
func ScramCredentialFromSaltedPassword(m string, salted, salt []byte, i int) (ScramCredential, error) {
	return ScramCredential{}, nil
}

type Server interface {
	Mechanism() string
	Step([]byte) ([]byte, bool, error)
	AuthorizationID() string
}

func NewPlainServer(func(u, p string) bool) Server { return nil }
func NewScramServer(m string, l func(string) (ScramCredential, bool), n func() string) (Server, error) {
	return nil, nil
}

type LoginModule struct {
	Class, Flag string
	Options     map[string]string
}

func ParseJAAS(string) ([]LoginModule, error)                { return nil, nil }
func PlainUsers([]LoginModule) map[string]string             { return nil }
func ClientCredentials([]LoginModule) (string, string, bool) { return "", "", false }
