package sasl

import (
	"crypto/sha256"
	"crypto/subtle"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PlainMechanism is the SASL/PLAIN mechanism name.
const PlainMechanism = "PLAIN"

// plainServer is Kafka's PlainSaslServer: a single client message
// authzid NUL authcid NUL passwd (RFC 4616), checked by a verify function.
type plainServer struct {
	verify  func(user, password string) bool
	st      state
	authzID string
}

// NewPlainServer returns a SASL/PLAIN exchange that accepts a user when
// verify(user, password) is true. A nil verify accepts no one.
func NewPlainServer(verify func(user, password string) bool) Server {
	return &plainServer{verify: verify}
}

func (p *plainServer) Mechanism() string { return PlainMechanism }

func (p *plainServer) AuthorizationID() string {
	if p.st != stateComplete {
		return ""
	}
	return p.authzID
}

// Step checks in Kafka's order: token count, empty username, empty password,
// the password itself, then the requested authorization id — so a wrong
// password is reported before an authzid mismatch, as in PlainSaslServer.
func (p *plainServer) Step(token []byte) ([]byte, bool, error) {
	if p.st != stateFirst {
		return nil, false, illegalState(PlainMechanism, p.st)
	}
	p.st = stateFailed
	if len(token) > MaxTokenSize {
		return nil, false, tooLong(PlainMechanism, len(token))
	}
	tokens := splitPlain(javaString(token))
	if len(tokens) != 3 {
		return nil, false, publicError(PlainMechanism,
			"Invalid SASL/PLAIN response: expected 3 tokens, got "+strconv.Itoa(len(tokens)))
	}
	authzID, user, password := tokens[0], tokens[1], tokens[2]
	if user == "" {
		return nil, false, publicError(PlainMechanism, "Authentication failed: username not specified")
	}
	if password == "" {
		return nil, false, publicError(PlainMechanism, "Authentication failed: password not specified")
	}
	if p.verify == nil || !p.verify(user, password) {
		return nil, false, publicError(PlainMechanism, "Authentication failed: Invalid username or password")
	}
	if authzID != "" && authzID != user {
		return nil, false, publicError(PlainMechanism,
			"Authentication failed: Client requested an authorization id that is different from username")
	}
	p.authzID = user
	p.st = stateComplete
	return []byte{}, true, nil
}

// splitPlain mirrors PlainSaslServer.extractTokens: it cuts at most four
// NUL-separated pieces, so any count of NULs other than two yields a count
// other than three (and never more than four, as Kafka reports).
func splitPlain(s string) []string {
	var tokens []string
	for range 4 {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			tokens = append(tokens, s)
			break
		}
		tokens = append(tokens, s[:i])
		s = s[i+1:]
	}
	return tokens
}

// javaString decodes bytes as Java's new String(bytes, UTF_8) does: invalid
// sequences become U+FFFD rather than failing, so a malformed token is judged
// on the same text Kafka would judge it on.
func javaString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// PlainVerifier checks a password against users (as PlainUsers returns them)
// without a timing signal, as Kafka's PlainServerCallbackHandler does with
// Utils.isEqualConstantTime. Both sides are hashed first so that not even the
// stored password's length shows (subtle.ConstantTimeCompare returns early
// on a length mismatch).
func PlainVerifier(users map[string]string) func(user, password string) bool {
	return func(user, password string) bool {
		want, ok := users[user]
		if !ok {
			return false
		}
		w, g := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(password))
		return subtle.ConstantTimeCompare(w[:], g[:]) == 1
	}
}
