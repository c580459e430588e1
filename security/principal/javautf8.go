package principal

import (
	"strings"
	"unicode/utf8"
)

// javaDecodeUTF8 decodes p as the JDK's new String(bytes, UTF_8) does
// (String.decodeUTF8_UTF16 with replacement), so that the number of U+FFFD
// characters an ill-formed value turns into matches Java's: a 3-byte
// sequence that encodes a surrogate becomes one U+FFFD, a sequence cut off
// by the end of the input becomes one U+FFFD for the lead byte and the
// continuation bytes that fit it, and so on. Well-formed input is returned
// unchanged.
func javaDecodeUTF8(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	const repl = utf8.RuneError
	var b strings.Builder
	isCont := func(c byte) bool { return c&0xc0 == 0x80 }
	sp, sl := 0, len(p)
	for sp < sl {
		b1 := p[sp]
		sp++
		switch {
		case b1 < 0x80:
			b.WriteByte(b1)
		case b1 >= 0xc2 && b1 <= 0xdf:
			if sp < sl {
				if !isCont(p[sp]) {
					b.WriteRune(repl)
				} else {
					b.WriteRune(rune(b1&0x1f)<<6 | rune(p[sp]&0x3f))
					sp++
				}
				continue
			}
			b.WriteRune(repl)
		case b1 >= 0xe0 && b1 <= 0xef:
			if sp+1 < sl {
				b2, b3 := p[sp], p[sp+1]
				if malformed3(b1, b2) || !isCont(b3) {
					b.WriteRune(repl)
					if !malformed3(b1, b2) {
						sp++ // Java skips the lead and a fitting second byte
					}
					continue
				}
				sp += 2
				c := rune(b1&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f)
				if c >= 0xd800 && c <= 0xdfff {
					b.WriteRune(repl)
				} else {
					b.WriteRune(c)
				}
				continue
			}
			b.WriteRune(repl)
			if sp < sl && malformed3(b1, p[sp]) {
				continue
			}
			sp = sl // the cut-off sequence swallows what is left
		case b1 >= 0xf0 && b1 <= 0xf7:
			if sp+2 < sl {
				b2, b3, b4 := p[sp], p[sp+1], p[sp+2]
				uc := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
				if !isCont(b2) || !isCont(b3) || !isCont(b4) || uc < 0x10000 || uc > utf8.MaxRune {
					b.WriteRune(repl)
					sp += malformed4(b1, b2, b3) - 1
					continue
				}
				sp += 3
				b.WriteRune(uc)
				continue
			}
			if b1 > 0xf4 || sp < sl && malformed4Second(b1, p[sp]) {
				b.WriteRune(repl)
				continue
			}
			b.WriteRune(repl)
			sp++
			if sp < sl && !isCont(p[sp]) {
				continue
			}
			sp = sl
		default:
			b.WriteRune(repl)
		}
	}
	return b.String()
}

// malformed3 reports whether b2 cannot follow the lead byte b1 of a 3-byte
// sequence (Java's isMalformed3_2: E0 needs A0..BF, the rest 80..BF; Java
// does not reject ED A0..BF here, it rejects the surrogate afterwards).
func malformed3(b1, b2 byte) bool {
	return (b1 == 0xe0 && b2&0xe0 == 0x80) || b2&0xc0 != 0x80
}

func malformed4Second(b1, b2 byte) bool {
	return (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || b2&0xc0 != 0x80
}

// malformed4 is how many bytes Java's replacement covers for an ill-formed
// 4-byte sequence starting b1 b2 b3.
func malformed4(b1, b2, b3 byte) int {
	if b1 > 0xf4 || malformed4Second(b1, b2) {
		return 1
	}
	if b3&0xc0 != 0x80 {
		return 2
	}
	return 3
}

// javaDecodeUTF16BE decodes p as the JDK's new String(bytes, UTF_16BE)
// does (sun.nio.cs.UnicodeDecoder with replacement): no byte-order mark is
// interpreted, a high surrogate followed by a unit that is not a low
// surrogate becomes one U+FFFD for both units, a lone low surrogate one
// U+FFFD, and whatever is left at the end that does not form a character
// (an odd byte, a high surrogate with or without an odd byte after it) one
// U+FFFD.
func javaDecodeUTF16BE(p []byte) string {
	const repl = utf8.RuneError
	var b strings.Builder
	unit := func(i int) rune { return rune(p[i])<<8 | rune(p[i+1]) }
	isHigh := func(c rune) bool { return c >= 0xd800 && c <= 0xdbff }
	isLow := func(c rune) bool { return c >= 0xdc00 && c <= 0xdfff }
	i := 0
	for len(p)-i > 1 {
		c := unit(i)
		switch {
		case isHigh(c):
			if len(p)-i < 4 {
				// Too short for a pair: the end-of-input rule below.
				b.WriteRune(repl)
				return b.String()
			}
			c2 := unit(i + 2)
			if isLow(c2) {
				b.WriteRune(0x10000 + (c-0xd800)<<10 + (c2 - 0xdc00))
			} else {
				b.WriteRune(repl)
			}
			i += 4
		case isLow(c):
			b.WriteRune(repl)
			i += 2
		default:
			b.WriteRune(c)
			i += 2
		}
	}
	if i < len(p) {
		b.WriteRune(repl)
	}
	return b.String()
}
