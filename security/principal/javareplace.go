package principal

import (
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf16"
)

// replaceAll is Java's String.replaceAll(pattern, replacement): every match
// findAll reports is replaced by the replacement expanded with Java's
// Matcher.appendReplacement rules. Java works on UTF-16 code units, and so
// does the expansion here, so a backslash inserted or skipped lands where
// Java puts it.
func (j *javaRegexp) replaceAll(s, replacement string) (string, error) {
	matches := j.findAll(s)
	if len(matches) == 0 {
		return s, nil
	}
	repl := utf16.Encode([]rune(replacement))
	var out []uint16
	last := 0
	for _, m := range matches {
		out = appendUTF16(out, s[last:m[0]])
		var err error
		out, err = j.appendExpanded(out, repl, s, m)
		if err != nil {
			return "", err
		}
		last = m[1]
	}
	out = appendUTF16(out, s[last:])
	return string(utf16.Decode(out)), nil
}

func appendUTF16(dst []uint16, s string) []uint16 {
	for _, r := range s {
		dst = utf16.AppendRune(dst, r)
	}
	return dst
}

func isASCIIDigit(c uint16) bool { return c >= '0' && c <= '9' }

func isASCIIAlnum(c uint16) bool {
	return isASCIIDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// appendExpanded appends replacement with group references resolved as
// Java's Matcher.appendExpandedReplacement does: "\x" is a literal x; "$n"
// takes the first digit, then further digits while the number stays a
// group of the pattern; "${name}" is a named group; an unmatched group adds
// nothing. The error cases are Java's exceptions, with its messages in
// lower case.
func (j *javaRegexp) appendExpanded(out, repl []uint16, s string, m []int) ([]uint16, error) {
	groups := j.re.NumSubexp()
	for cursor := 0; cursor < len(repl); {
		c := repl[cursor]
		switch c {
		case '\\':
			cursor++
			if cursor == len(repl) {
				return nil, fmt.Errorf("character to be escaped is missing")
			}
			out = append(out, repl[cursor])
			cursor++
			continue
		case '$':
		default:
			out = append(out, c)
			cursor++
			continue
		}
		cursor++
		if cursor == len(repl) {
			return nil, fmt.Errorf("illegal group reference: group index is missing")
		}
		var ref int
		if repl[cursor] == '{' {
			cursor++
			start := cursor
			for cursor < len(repl) && isASCIIAlnum(repl[cursor]) {
				cursor++
			}
			name := string(utf16.Decode(repl[start:cursor]))
			if name == "" {
				return nil, fmt.Errorf("named capturing group has 0 length name")
			}
			if cursor == len(repl) || repl[cursor] != '}' {
				return nil, fmt.Errorf("named capturing group is missing trailing '}'")
			}
			if name[0] >= '0' && name[0] <= '9' {
				return nil, fmt.Errorf("capturing group name {%s} starts with digit character", name)
			}
			ref = j.re.SubexpIndex(name)
			if ref < 0 {
				return nil, fmt.Errorf("no group with name {%s}", name)
			}
			cursor++
		} else {
			if !isASCIIDigit(repl[cursor]) {
				return nil, fmt.Errorf("illegal group reference")
			}
			ref = int(repl[cursor] - '0')
			cursor++
			for cursor < len(repl) && isASCIIDigit(repl[cursor]) {
				next := ref*10 + int(repl[cursor]-'0')
				if next > groups {
					break
				}
				ref = next
				cursor++
			}
		}
		if ref > groups {
			return nil, fmt.Errorf("no group %d", ref)
		}
		if m[2*ref] >= 0 && m[2*ref+1] >= 0 {
			out = appendUTF16(out, s[m[2*ref]:m[2*ref+1]])
		}
	}
	return out, nil
}

var backReference = regexp.MustCompile(`\$([0-9]+)`)

// escapeLiteralBackReferences is Kafka's SslPrincipalMapper method of the
// same name (taken there from Apache NiFi): a "$n" naming a group the
// pattern does not have is turned into a literal "\$n", after first trying
// to read it as a shorter group number ("$12" with 1 group is "$1" then
// "2"). It copies Kafka's quirks: the positions found in the original
// string are used on the string being rewritten, so the second rewrite
// lands one place early, and a pattern without groups is left alone (the
// expansion then fails with "No group"). A number too large for an int is
// Java's NumberFormatException.
func escapeLiteralBackReferences(unescaped string, groups int) (string, error) {
	if groups == 0 {
		return unescaped, nil
	}
	orig := utf16.Encode([]rune(unescaped))
	value := orig
	for _, m := range backReference.FindAllStringSubmatchIndex(unescaped, -1) {
		num := unescaped[m[2]:m[3]]
		if num[0] == '0' {
			continue
		}
		idx, err := strconv.ParseInt(num, 10, 32)
		if err != nil {
			return "", fmt.Errorf("for input string: %q", num)
		}
		for idx > int64(groups) && idx >= 10 {
			idx /= 10
		}
		if idx > int64(groups) {
			// The match offset in UTF-16 units of the original string.
			groupStart := len(utf16.Encode([]rune(unescaped[:m[2]])))
			next := make([]uint16, 0, len(value)+1)
			next = append(next, value[:groupStart-1]...)
			next = append(next, '\\')
			next = append(next, value[groupStart-1:]...)
			value = next
		}
	}
	return string(utf16.Decode(value)), nil
}
