package config

import (
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
	}{
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a: b", map[string]string{"a": "b"}},
		{"blank separator", "a   b", map[string]string{"a": "b"}},
		{"blanks around", "  a  =  b  ", map[string]string{"a": "b"}},
		{"comments", "# x=y\n! p=q\n  # z=w\na=1", map[string]string{"a": "1"}},
		{"blank lines", "\n\n a=1 \n\n", map[string]string{"a": "1"}},
		{"crlf", "a=1\r\nb=2\r\n", map[string]string{"a": "1", "b": "2"}},
		{"lone cr", "a=1\rb=2\r", map[string]string{"a": "1", "b": "2"}},
		{"continuation over crlf", "a=x\\\r\n  y", map[string]string{"a": "xy"}},
		{"empty value", "a=", map[string]string{"a": ""}},
		{"key only", "a", map[string]string{"a": ""}},
		{"second separator kept", "a==b", map[string]string{"a": "=b"}},
		{"continuation", "a=one,\\\n    two,\\\n  three", map[string]string{"a": "one,two,three"}},
		{"escaped backslash is no continuation", "a=x\\\\\nb=y", map[string]string{"a": `x\`, "b": "y"}},
		{"comment does not continue", "# c \\\na=1", map[string]string{"a": "1"}},
		{"escaped separator in key", `a\=b=c`, map[string]string{"a=b": "c"}},
		{"escaped colon and blank", `k\:1\ 2=v`, map[string]string{"k:1 2": "v"}},
		{"escapes", `a=t\tn\nu\u0041x\y`, map[string]string{"a": "t\tn\nuAxy"}},
		{"hash inside value", "a=b#c", map[string]string{"a": "b#c"}},
		{"later wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"listener value", "listeners=PLAINTEXT://:9092", map[string]string{"listeners": "PLAINTEXT://:9092"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := parseProperties(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, p := range props {
				got[p.key] = p.value
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || g != v {
					t.Fatalf("key %q: got %q, want %q (all: %q)", k, g, v, got)
				}
			}
		})
	}
}

func TestParsePropertiesMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uZZZZ`} {
		if _, err := parseProperties(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// FuzzParseProperties checks that no input panics the parser and that
// every key it returns survives being written back with escapes.
func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=b", "a\\\n b", `k\:1=\u0041`, "# c\n! d\n", "a\\", `\u`, "x:y\r\nz y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		props, err := parseProperties(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range props {
			again, err := parseProperties(strings.NewReader(escapeKey(p.key) + "=x"))
			if err != nil || len(again) != 1 || again[0].key != p.key {
				t.Fatalf("key %q did not round-trip: %v %v", p.key, again, err)
			}
		}
	})
}

// escapeKey writes a key the way Properties.store would.
func escapeKey(k string) string {
	var b strings.Builder
	// Bytes, not runes: a key may hold invalid UTF-8, which must stay as is.
	for i := 0; i < len(k); i++ {
		switch r := k[i]; r {
		case '\\', '=', ':', ' ', '#', '!':
			b.WriteByte('\\')
			b.WriteByte(r)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteByte(r)
		}
	}
	return b.String()
}
