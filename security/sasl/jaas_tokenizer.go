package sasl

// jaasTokenizer reproduces java.io.StreamTokenizer as Kafka's JaasConfig
// configures it: the default syntax table (letters and 160-255 are word
// characters, 0-32 white space, double and single quotes quoting, '/' a
// comment character, digits '.' and '-' numeric), '-' '_' '$' added as word
// characters, and both "//" and "/* */" comments. Its odd corners are kept on
// purpose, since they decide which configurations Kafka accepts: a token starting with a digit,
// '.' or '-' is a number and has no text; a lone '/' starts a line comment;
// an unterminated quote ends at a line break or the end of input; a backslash
// at the very end of a quote yields U+FFFF. Characters are Unicode code
// points; every one above 255 is a word character, as in Java.
type jaasTokenizer struct {
	src   []rune
	pos   int
	peekc rune
}

const (
	tokEOF = iota
	tokWord
	tokNumber
	tokQuoted
	tokChar // an ordinary character, such as '=' or ';'
)

const (
	needChar rune = -2
	eofChar  rune = -1
)

type jaasToken struct {
	kind int
	ch   rune   // the character, for tokChar
	text string // for tokWord and tokQuoted
}

// hasText is StreamTokenizer's sval != null.
func (t jaasToken) hasText() bool { return t.kind == tokWord || t.kind == tokQuoted }

const (
	ctWhite = 1 << iota
	ctDigit
	ctAlpha
	ctQuote
	ctComment
)

var jaasCtype = func() (ct [256]byte) {
	for c := 'a'; c <= 'z'; c++ {
		ct[c] |= ctAlpha
	}
	for c := 'A'; c <= 'Z'; c++ {
		ct[c] |= ctAlpha
	}
	for c := 160; c <= 255; c++ {
		ct[c] |= ctAlpha
	}
	for c := 0; c <= ' '; c++ {
		ct[c] = ctWhite
	}
	ct['/'] = ctComment
	ct['"'] = ctQuote
	ct['\''] = ctQuote
	for c := '0'; c <= '9'; c++ {
		ct[c] |= ctDigit
	}
	ct['.'] |= ctDigit
	ct['-'] |= ctDigit
	ct['-'] |= ctAlpha
	ct['_'] |= ctAlpha
	ct['$'] |= ctAlpha
	return ct
}()

func ctypeOf(c rune) byte {
	if c < 0 {
		return ctWhite
	}
	if c >= 256 {
		return ctAlpha
	}
	return jaasCtype[c]
}

func newJAASTokenizer(s string) *jaasTokenizer {
	return &jaasTokenizer{src: []rune(s), peekc: needChar}
}

func (t *jaasTokenizer) read() rune {
	if t.pos >= len(t.src) {
		return eofChar
	}
	c := t.src[t.pos]
	t.pos++
	return c
}

// next returns the next token. Every path consumes input or returns EOF, so
// a caller looping until EOF ends.
func (t *jaasTokenizer) next() jaasToken {
	for {
		c := t.peekc
		t.peekc = needChar
		if c < 0 {
			c = t.read()
		}
		if c < 0 {
			return jaasToken{kind: tokEOF}
		}
		ct := ctypeOf(c)
		for ct&ctWhite != 0 {
			c = t.read()
			if c < 0 {
				return jaasToken{kind: tokEOF}
			}
			ct = ctypeOf(c)
		}
		switch {
		case ct&ctDigit != 0:
			return t.number(c)
		case ct&ctAlpha != 0:
			return t.word(c)
		case ct&ctQuote != 0:
			return t.quoted(c)
		case c == '/':
			if eof := t.comment(); eof {
				return jaasToken{kind: tokEOF}
			}
			continue
		}
		return jaasToken{kind: tokChar, ch: c}
	}
}

func (t *jaasTokenizer) number(c rune) jaasToken {
	if c == '-' {
		c = t.read()
		if c != '.' && (c < '0' || c > '9') {
			t.peekc = c
			return jaasToken{kind: tokChar, ch: '-'}
		}
	}
	seenDot := false
	for {
		if c == '.' && !seenDot {
			seenDot = true
		} else if c < '0' || c > '9' {
			break
		}
		c = t.read()
	}
	t.peekc = c
	return jaasToken{kind: tokNumber}
}

func (t *jaasTokenizer) word(c rune) jaasToken {
	var buf []rune
	for {
		buf = append(buf, c)
		c = t.read()
		if ctypeOf(c)&(ctAlpha|ctDigit) == 0 {
			break
		}
	}
	t.peekc = c
	return jaasToken{kind: tokWord, text: string(buf)}
}

func (t *jaasTokenizer) quoted(q rune) jaasToken {
	var buf []rune
	d := t.read()
	for d >= 0 && d != q && d != '\n' && d != '\r' {
		var c rune
		if d == '\\' {
			c = t.read()
			first := c
			if c >= '0' && c <= '7' {
				c -= '0'
				c2 := t.read()
				if c2 >= '0' && c2 <= '7' {
					c = c<<3 + (c2 - '0')
					c2 = t.read()
					if c2 >= '0' && c2 <= '7' && first <= '3' {
						c = c<<3 + (c2 - '0')
						d = t.read()
					} else {
						d = c2
					}
				} else {
					d = c2
				}
			} else {
				switch c {
				case 'a':
					c = 0x7
				case 'b':
					c = '\b'
				case 'f':
					c = 0xC
				case 'n':
					c = '\n'
				case 'r':
					c = '\r'
				case 't':
					c = '\t'
				case 'v':
					c = 0xB
				case eofChar:
					c = 0xFFFF // Java's (char) -1
				}
				d = t.read()
			}
		} else {
			c = d
			d = t.read()
		}
		buf = append(buf, c)
	}
	if d == q {
		t.peekc = needChar
	} else {
		t.peekc = d
	}
	return jaasToken{kind: tokQuoted, ch: q, text: string(buf)}
}

// comment skips a comment after '/', reporting whether input ended inside
// an unterminated "/*" (which StreamTokenizer reports as end of input).
func (t *jaasTokenizer) comment() (eof bool) {
	c := t.read()
	if c == '*' {
		prev := rune(0)
		for {
			c = t.read()
			if c == '/' && prev == '*' {
				return false
			}
			// StreamTokenizer steps over a line break and the character
			// after it here, which therefore can only be a "prev".
			if c == '\r' {
				if c = t.read(); c == '\n' {
					c = t.read()
				}
			} else if c == '\n' {
				c = t.read()
			}
			if c < 0 {
				return true
			}
			prev = c
		}
	}
	// "//" and, since '/' is a comment character, a lone '/' (whose next
	// character is already consumed) both run to the end of the line.
	for {
		c = t.read()
		if c == '\n' || c == '\r' || c < 0 {
			break
		}
	}
	t.peekc = c
	return false
}
