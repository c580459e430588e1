package sasl

import (
	"crypto/sha256"
	"crypto/sha512"
	"hash"
)

// SCRAM mechanism names (Kafka's ScramMechanism).
const (
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
)

// Iteration bounds. MinIterations is Kafka's ScramMechanism.minIterations for
// both mechanisms (RFC 7677's recommended minimum); a stored credential with
// fewer iterations is refused at login. MaxIterations is the ceiling
// Kafka's ScramControlManager applies to AlterUserScramCredentials upsertions.
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// scramMech is one row of Kafka's ScramMechanism enum.
type scramMech struct {
	name     string
	enumName string // the Java enum constant, which Kafka prints in messages
	typ      int8   // DescribeUserScramCredentials / UserScramCredentialRecord type code
	newHash  func() hash.Hash
	size     int
}

var scramMechs = []scramMech{
	{name: ScramSHA256, enumName: "SCRAM_SHA_256", typ: 1, newHash: sha256.New, size: sha256.Size},
	{name: ScramSHA512, enumName: "SCRAM_SHA_512", typ: 2, newHash: sha512.New, size: sha512.Size},
}

func lookupMech(name string) *scramMech {
	for i := range scramMechs {
		if scramMechs[i].name == name {
			return &scramMechs[i]
		}
	}
	return nil
}

// ScramMechanisms lists the supported SCRAM mechanism names.
func ScramMechanisms() []string {
	out := make([]string, len(scramMechs))
	for i, m := range scramMechs {
		out[i] = m.name
	}
	return out
}

// IsScram reports whether mechanism is a supported SCRAM mechanism.
func IsScram(mechanism string) bool { return lookupMech(mechanism) != nil }

// MechanismType maps a SCRAM mechanism name to its type code in
// Describe/AlterUserScramCredentials and UserScramCredentialRecord
// (1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512). Kafka's admin ScramMechanism calls
// 0 UNKNOWN; it is never returned with ok.
func MechanismType(mechanism string) (int8, bool) {
	if m := lookupMech(mechanism); m != nil {
		return m.typ, true
	}
	return 0, false
}

// MechanismName is the reverse of MechanismType.
func MechanismName(typ int8) (string, bool) {
	for _, m := range scramMechs {
		if m.typ == typ {
			return m.name, true
		}
	}
	return "", false
}

// ErrTooFewIterations and ErrTooManyIterations carry the texts Kafka's
// ScramControlManager returns with UNACCEPTABLE_CREDENTIAL.
var (
	ErrTooFewIterations  error = errorString("Too few iterations")
	ErrTooManyIterations error = errorString("Too many iterations")
)

// ValidateIterations applies Kafka's AlterUserScramCredentials bounds. Call it
// before NewScramCredential or ScramCredentialFromSaltedPassword with a count
// that came from a client, since NewScramCredential runs that many HMACs.
func ValidateIterations(iterations int) error {
	switch {
	case iterations < MinIterations:
		return ErrTooFewIterations
	case iterations > MaxIterations:
		return ErrTooManyIterations
	}
	return nil
}

func unsupportedMechanism(mechanism string) error {
	return errorString("Requested mechanism '" + mechanism +
		"' is not supported. Supported mechanisms are '[" + ScramSHA256 + ", " + ScramSHA512 + "]'.")
}
