package principal

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// javaRegexp is a Go regexp made to behave like a java.util.regex.Pattern
// where the two can be brought together cheaply; see doc.go for what still
// differs.
type javaRegexp struct {
	source string // the pattern as written, which Kafka prints back
	re     *regexp.Regexp
	prog   *syntax.Prog // for the empty-match test in findAll
}

// javaDot is the class Java's '.' stands for without DOTALL: everything
// but the line terminators \n, \r, U+0085, U+2028 and U+2029 (Go's '.'
// only leaves out \n).
const javaDot = `[^\n\r\x{85}\x{2028}\x{2029}]`

// compileJava compiles a Java pattern. With whole set the result matches
// only the entire input, as Matcher.matches() does.
func compileJava(pattern string, whole bool) (*javaRegexp, error) {
	// Compile the source as written first, so errors name what was written.
	if _, err := syntax.Parse(pattern, syntax.Perl); err != nil {
		return nil, err
	}
	goPattern, openQuote := javaDots(pattern)
	if openQuote {
		goPattern += `\E`
	}
	if whole {
		goPattern = `\A(?:` + goPattern + `)\z`
	}
	re, err := regexp.Compile(goPattern)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(goPattern, syntax.Perl)
	if err != nil {
		return nil, err
	}
	prog, err := syntax.Compile(tree.Simplify())
	if err != nil {
		return nil, err
	}
	return &javaRegexp{source: pattern, re: re, prog: prog}, nil
}

// javaDots rewrites each '.' that stands for "any character" into javaDot.
// It walks the Go syntax by hand (escapes, \Q...\E quotes, character
// classes) because rebuilding the text from a parsed tree is slow for big
// classes. A pattern that turns on the s flag anywhere is left as it is:
// there Java's and Go's dots agree, and tracking the flag's scope is not
// worth it; outside that scope Go's dot then also matches \r. openQuote
// reports a \Q left open at the end, which the caller closes before adding
// anything after the pattern.
func javaDots(p string) (out string, openQuote bool) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && p[i+1] == 'Q':
			end := strings.Index(p[i+2:], `\E`)
			if end < 0 {
				b.WriteString(p[i:])
				return b.String(), true
			}
			b.WriteString(p[i : i+2+end+2])
			i += 2 + end + 2
		case c == '\\':
			n := min(2, len(p)-i)
			b.WriteString(p[i : i+n])
			i += n
		case c == '[':
			n := classLen(p[i:])
			b.WriteString(p[i : i+n])
			i += n
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			if flagsSetS(p[i+2:]) {
				return p, false
			}
			b.WriteByte(c)
			i++
		case c == '.':
			b.WriteString(javaDot)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), false
}

// classLen is the length of the character class at the start of p, in Go's
// syntax: a ']' right after "[" or "[^" is a literal, "[:name:]" nests,
// backslash escapes. An unterminated class runs to the end (the pattern
// has already compiled, so that does not happen).
func classLen(p string) int {
	i := 1
	if i < len(p) && p[i] == '^' {
		i++
	}
	if i < len(p) && p[i] == ']' {
		i++
	}
	for i < len(p) {
		switch {
		case p[i] == '\\':
			i += 2
		case strings.HasPrefix(p[i:], "[:"):
			if end := strings.Index(p[i+2:], ":]"); end >= 0 {
				i += 2 + end + 2
			} else {
				i++
			}
		case p[i] == ']':
			return i + 1
		default:
			i++
		}
	}
	return len(p)
}

// flagsSetS reports whether the flag group whose text follows "(?" turns
// the s flag on ("(?s)", "(?is:", but not "(?-s)" or a named group).
func flagsSetS(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case 's':
			return true
		case '-', ':', ')', 'P', '<':
			return false
		}
	}
	return false
}

// findAll returns the matches java.util.regex.Matcher.find() reports one
// after another, as submatch index slices. Go's FindAll drops an empty
// match that starts where the previous match ended; Java keeps it (so
// "abc".replaceAll("a*", "X") is "XXbXcX" in Java, "XbXcX" in Go). Those
// are the only matches Go leaves out: after one, both engines resume the
// search one character further on. So each non-empty match that Go does not
// follow with a match at its end gets an empty match there when the pattern
// can match the empty string at that point.
func (j *javaRegexp) findAll(s string) [][]int {
	ms := j.re.FindAllStringSubmatchIndex(s, -1)
	out := make([][]int, 0, len(ms))
	for i, m := range ms {
		out = append(out, m)
		e := m[1]
		if e == m[0] || (i+1 < len(ms) && ms[i+1][0] == e) {
			continue
		}
		if j.matchesEmptyAt(s, e) {
			empty := make([]int, len(m))
			for k := range empty {
				empty[k] = -1
			}
			empty[0], empty[1] = e, e
			out = append(out, empty)
		}
	}
	return out
}

// matchesEmptyAt reports whether the pattern matches the empty string at
// byte offset pos of s: whether the program reaches its match instruction
// without consuming input, given the zero-width conditions (^, $, \b ...)
// that hold at pos.
func (j *javaRegexp) matchesEmptyAt(s string, pos int) bool {
	r1, r2 := rune(-1), rune(-1)
	if pos > 0 {
		r1, _ = utf8.DecodeLastRuneInString(s[:pos])
	}
	if pos < len(s) {
		r2, _ = utf8.DecodeRuneInString(s[pos:])
	}
	flag := syntax.EmptyOpContext(r1, r2)
	seen := make([]bool, len(j.prog.Inst))
	stack := []uint32{uint32(j.prog.Start)}
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		inst := &j.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstMatch:
			return true
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, inst.Out, inst.Arg)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^flag == 0 {
				stack = append(stack, inst.Out)
			}
		}
	}
	return false
}
