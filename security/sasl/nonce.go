package sasl

import (
	"crypto/rand"
	"math/big"
)

// RandomNonce makes a server nonce as Kafka's ScramFormatter.secureRandomString
// does: 130 random bits written in base 36. It reads the system's randomness,
// so it is passed to NewScramServer rather than called inside it.
func RandomNonce() string {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		panic("sasl: crypto/rand: " + err.Error())
	}
	return n.Text(36)
}
