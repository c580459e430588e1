package sasl

import (
	"encoding/base64"
	"strings"
)

// The SCRAM message grammar accepted here is that of Kafka's ScramMessages
// regular expressions, written out by hand so that parsing is linear and
// cannot panic:
//
//	client-first = "n," ["a=" saslname] "," ["m=" value ","]
//	               "n=" saslname ",r=" printable *("," alpha "=" value)
//	client-final = "c=" base64 ",r=" printable *("," alpha "=" value)
//	               ",p=" base64
//
// saslname is ASCII 0x01-0x7F without '=' and ',' or the escapes "=2C" and
// "=3D"; value is ASCII 0x01-0x7F without ','; printable is 0x21-0x7E
// without ','; base64 is the padded standard alphabet (possibly empty). Only
// the gs2 flag "n" is accepted, so a client asking for channel binding ("y"
// or "p=") is refused like any other malformed message, as Kafka does.

var (
	errFirstFormat = errorString("Invalid SCRAM client first message format")
	errFinalFormat = errorString("Invalid SCRAM client final message format")
)

// clientFirst is a parsed client-first-message.
type clientFirst struct {
	gs2Header  string // "n,," or "n,a=<saslname>,", as sent
	authzID    string // unescaped; "" when absent
	user       string // unescaped
	nonce      string
	bare       string // client-first-message-bare, as sent (part of AuthMessage)
	extensions map[string]string
}

func parseClientFirst(msg string) (clientFirst, error) {
	var cf clientFirst
	if !strings.HasPrefix(msg, "n,") {
		return cf, errFirstFormat
	}
	rest := msg[2:]
	if strings.HasPrefix(rest, "a=") {
		name, tail := cutComma(rest[2:])
		authz, ok := unescapeSaslName(name)
		if !ok {
			return cf, errFirstFormat
		}
		cf.authzID, rest = authz, tail
	}
	if !strings.HasPrefix(rest, ",") {
		return cf, errFirstFormat
	}
	rest = rest[1:]
	cf.gs2Header = msg[:len(msg)-len(rest)]
	cf.bare = rest
	if strings.HasPrefix(rest, "m=") {
		// Kafka's RESERVED group: accepted and otherwise ignored.
		v, tail := cutComma(rest[2:])
		if !isValue(v) || !strings.HasPrefix(tail, ",") {
			return cf, errFirstFormat
		}
		rest = tail[1:]
	}
	if !strings.HasPrefix(rest, "n=") {
		return cf, errFirstFormat
	}
	name, tail := cutComma(rest[2:])
	user, ok := unescapeSaslName(name)
	if !ok || !strings.HasPrefix(tail, ",r=") {
		return cf, errFirstFormat
	}
	cf.user = user
	cf.nonce, rest = cutComma(tail[3:])
	if !isPrintable(cf.nonce) {
		return cf, errFirstFormat
	}
	ext, ok := parseExtensions(rest)
	if !ok {
		return cf, errFirstFormat
	}
	cf.extensions = ext
	return cf, nil
}

// parseExtensions reads *("," alpha "=" value) to the end of s. Later
// duplicates win, as in Kafka's Utils.parseMap into a HashMap.
func parseExtensions(s string) (map[string]string, bool) {
	var ext map[string]string
	for s != "" {
		if s[0] != ',' {
			return nil, false
		}
		var item string
		item, s = cutComma(s[1:])
		k, v, ok := strings.Cut(item, "=")
		if !ok || !isAlpha(k) || !isValue(v) {
			return nil, false
		}
		if ext == nil {
			ext = make(map[string]string)
		}
		ext[k] = v
	}
	return ext, true
}

// clientFinal is a parsed client-final-message.
type clientFinal struct {
	channelBinding []byte
	nonce          string
	proof          []byte
	withoutProof   string // client-final-message-without-proof, as sent
}

func parseClientFinal(msg string) (clientFinal, error) {
	var cf clientFinal
	if !strings.HasPrefix(msg, "c=") {
		return cf, errFinalFormat
	}
	cb, rest := cutComma(msg[2:])
	var ok bool
	if cf.channelBinding, ok = decodeBase64(cb); !ok || !strings.HasPrefix(rest, ",r=") {
		return cf, errFinalFormat
	}
	cf.nonce, rest = cutComma(rest[3:])
	if !isPrintable(cf.nonce) {
		return cf, errFinalFormat
	}
	// The proof is the last item; everything between the nonce and it must
	// be extensions, which Kafka ignores.
	last := strings.LastIndexByte(rest, ',')
	if last < 0 || !strings.HasPrefix(rest[last:], ",p=") {
		return cf, errFinalFormat
	}
	if _, ok := parseExtensions(rest[:last]); !ok {
		return cf, errFinalFormat
	}
	if cf.proof, ok = decodeBase64(rest[last+3:]); !ok {
		return cf, errFinalFormat
	}
	cf.withoutProof = msg[:len(msg)-len(rest)+last]
	return cf, nil
}

// cutComma splits s at its first comma, keeping the comma in tail.
func cutComma(s string) (head, tail string) {
	if i := strings.IndexByte(s, ','); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// unescapeSaslName checks saslname and undoes RFC 5802's "=2C" / "=3D"
// escapes in one left-to-right pass (Kafka's ScramFormatter.username).
func unescapeSaslName(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '=':
			switch {
			case strings.HasPrefix(s[i:], "=2C"):
				b.WriteByte(',')
			case strings.HasPrefix(s[i:], "=3D"):
				b.WriteByte('=')
			default:
				return "", false
			}
			i += 2
		case c >= 0x01 && c <= 0x7f && c != ',':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// EscapeSaslName is RFC 5802's saslname encoding of a user name
// (Kafka's ScramFormatter.saslName).
func EscapeSaslName(user string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(user)
}

func isValue(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x01 || c > 0x7f || c == ',' {
			return false
		}
	}
	return true
}

func isPrintable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func isAlpha(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// decodeBase64 accepts only Kafka's BASE64 pattern: the standard alphabet in
// whole padded quads, possibly none.
func decodeBase64(s string) ([]byte, bool) {
	if len(s)%4 != 0 {
		return nil, false
	}
	body := strings.TrimSuffix(strings.TrimSuffix(s, "="), "=")
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil
}
