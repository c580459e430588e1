package tlsconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// pemParser finds the entries of one PEM type as Kafka's
// DefaultSslEngineFactory.PemParser does, which is looser than
// encoding/pem on purpose: the whole value may sit on one line of a
// properties file ("-----BEGIN CERTIFICATE----- MIIB... -----END
// CERTIFICATE-----"), header lines ("Proc-Type: ...") are skipped, any
// words may come between BEGIN and the type ("BEGIN ENCRYPTED PRIVATE
// KEY"), and text around the entries is ignored.
type pemParser struct {
	name string
	re   *regexp.Regexp
}

// javaSpace is Java's \s, which also holds \x0B.
const javaSpace = `[ \t\n\x0B\f\r]`

func newPEMParser(name string) *pemParser {
	nameIgnoreSpace := strings.ReplaceAll(name, " ", javaSpace+"+")
	// Kafka's pattern; Java's '.' leaves out \r and the Unicode line
	// terminators as well as \n.
	dot := `[^\n\r\x{85}\x{2028}\x{2029}]`
	beginOrEnd := func(word string) string {
		return `-+` + word + javaSpace + `*` + dot + `*` + nameIgnoreSpace + `[^-]*-+` + javaSpace + `+`
	}
	encodingParams := javaSpace + `*[^\r\n]*:[^\r\n]*[\r\n]+`
	base64Body := `([a-zA-Z0-9/+=` + `\t\n\x0B\f\r ` + `]*)`
	return &pemParser{
		name: name,
		re:   regexp.MustCompile(beginOrEnd("BEGIN") + `(?:` + encodingParams + `)*` + base64Body + beginOrEnd("END")),
	}
}

var (
	certificateParser = newPEMParser("CERTIFICATE")
	privateKeyParser  = newPEMParser("PRIVATE KEY")
)

// errNoPEMEntries is returned when the value holds no entry of the type.
var errNoPEMEntries = errors.New("no PEM entries")

// entries returns the DER bytes of each entry, in order.
func (p *pemParser) entries(pem string) ([][]byte, error) {
	var out [][]byte
	// Kafka appends a newline so the last one may be left out.
	for _, m := range p.re.FindAllStringSubmatch(pem+"\n", -1) {
		body := strings.Map(func(r rune) rune {
			if strings.ContainsRune(" \t\n\x0B\f\r", r) {
				return -1
			}
			return r
		}, m[1])
		der, err := decodeBase64(body)
		if err != nil {
			return nil, fmt.Errorf("bad base64 in a %s entry: %w", p.name, err)
		}
		out = append(out, der)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no %s entry found", errNoPEMEntries, p.name)
	}
	return out, nil
}

// decodeBase64 is Java's Base64.getDecoder(): '=' padding is optional,
// but allowed only at the end.
func decodeBase64(s string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}
