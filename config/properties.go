package config

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxPropertiesBytes bounds a configuration file: anything larger is not
// a server.properties.
const maxPropertiesBytes = 1 << 20

// property is one key=value pair in file order; line is the first natural
// line of its logical line, for error messages.
type property struct {
	key, value string
	line       int
}

// parseProperties reads the java.util.Properties text format the way
// Properties.load does: '#' and '!' comments, "key=value", "key: value" and
// "key value" separators, a backslash at the end of a line continues it on
// the next one (the next line's leading blanks dropped), and the escapes
// \t \n \r \f \uXXXX; a backslash before any other character stands for
// that character. Unlike Java, which decodes an InputStream as ISO-8859-1,
// the input is read as UTF-8: the files we read are written by people.
// Values are trimmed because Kafka's ConfigDef trims every value it parses.
func parseProperties(r io.Reader) ([]property, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPropertiesBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPropertiesBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxPropertiesBytes)
	}
	// Java ends a line at \n, \r or \r\n; the scanner only knows \n.
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxPropertiesBytes)
	var out []property
	lineNo := 0
	for sc.Scan() {
		lineNo++
		first := lineNo
		line := trimLeftBlank(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			// Java never continues a comment line, even one ending in '\'.
			continue
		}
		logical := line
		for endsWithContinuation(logical) {
			logical = logical[:len(logical)-1]
			if !sc.Scan() {
				break
			}
			lineNo++
			logical += trimLeftBlank(sc.Text())
		}
		key, value, err := splitProperty(logical)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first, err)
		}
		out = append(out, property{key: key, value: strings.TrimSpace(value), line: first})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeftBlank(s string) string {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return s[i:]
}

// endsWithContinuation reports an odd number of trailing backslashes: an
// even number is a run of escaped backslashes.
func endsWithContinuation(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the first unescaped '=', ':' or
// blank, then skips blanks and at most one '=' or ':' before the value.
func splitProperty(line string) (key, value string, err error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			end = i
			break
		}
	}
	rest := trimLeftBlank(line[end:])
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeftBlank(rest[1:])
	}
	if key, err = unescape(line[:end]); err != nil {
		return "", "", err
	}
	if value, err = unescape(rest); err != nil {
		return "", "", err
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i == len(s)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uxxxx encoding in %q`, s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
