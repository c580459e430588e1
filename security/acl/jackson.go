package acl

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Kafka writes znode JSON with a default Jackson ObjectMapper: compact, no
// spaces, and strings escaped Jackson's way, which differs from
// encoding/json: only '"', '\\' and control characters are escaped, the
// usual short forms where they exist and \u00XX with upper-case hex
// otherwise; '<', '>', '&' and U+2028/U+2029 are written as they are.

const upperHex = "0123456789ABCDEF"

func writeJacksonString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(upperHex[r>>4])
			b.WriteByte(upperHex[r&0xF])
		default:
			// Invalid UTF-8 becomes U+FFFD: a Java string cannot hold it,
			// Kafka would have replaced it when decoding the request.
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// jsonObjectOf reads a JSON object into its members, keeping only the last
// of duplicate keys (as Jackson's tree model does) and matching keys
// case-sensitively (encoding/json's struct decoding would not).
func jsonObjectOf(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// jsonString is Kafka's DecodeString: the value must be a JSON string (not
// null, not a number).
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// firstJSONValue parses the first JSON value of data the way Jackson's
// readTree does: a UTF-8 byte order mark is skipped, trailing content is
// ignored, and invalid UTF-8 inside the value is a parse error
// (encoding/json would quietly substitute U+FFFD).
func firstJSONValue(data []byte) (json.RawMessage, bool) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return nil, false
	}
	if !utf8.Valid(data[:dec.InputOffset()]) {
		return nil, false
	}
	return raw, true
}
