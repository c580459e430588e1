package principal

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"User:alice", "", ":", "User", "User:a:b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			if strings.Contains(s, ":") || !errors.Is(err, ErrPrincipalFormat) {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			return
		}
		if p.String() != s || strings.Contains(p.Type, ":") {
			t.Fatalf("Parse(%q) = %#v", s, p)
		}
	})
}

func FuzzParseSSLMappingRules(f *testing.F) {
	for _, s := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`,
		`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L`,
		"RULE:(.*)/User-$1/",
		"RULE:^CN=(?<user>[a-z]+)$/${user}/U",
		",,",
	} {
		f.Add(s, "CN=Duke,OU=ServiceUsers,O=Org,C=US")
	}
	f.Fuzz(func(t *testing.T, rules, dn string) {
		m, err := ParseSSLMappingRules(rules)
		if err != nil {
			if !errors.Is(err, ErrInvalidRule) {
				t.Fatalf("ParseSSLMappingRules(%q): %v", rules, err)
			}
			return
		}
		if !strings.HasPrefix(m.String(), "SslPrincipalMapper(rules = [") {
			t.Fatalf("String() = %q", m.String())
		}
		name, err := m.Name(dn)
		switch {
		case err == nil && len(m.rules) == 0:
			t.Fatalf("an empty rule list mapped %q to %q", dn, name)
		case err == nil && m.rules[0].isDefault && name != dn:
			t.Fatalf("DEFAULT first mapped %q to %q", dn, name)
		case err != nil && len(m.rules) > 0 && m.rules[0].isDefault:
			t.Fatalf("DEFAULT first failed on %q: %v", dn, err)
		}
	})
}

func FuzzFormatDN(f *testing.F) {
	f.Add([]byte{0x30, 0x00})
	f.Add(encodeName(f, rdn(testAVA{oidCN, 12, "a,b"}), rdn(testAVA{oidO, 30, "\x00a"}, testAVA{"1.2.3", 4, "x"})))
	f.Fuzz(func(t *testing.T, der []byte) {
		s, err := FormatDN(der)
		if err != nil {
			if !errors.Is(err, ErrDistinguishedName) {
				t.Fatalf("FormatDN: %v", err)
			}
			return
		}
		// Every value is decoded into runes, every other part is ASCII.
		if !strings.HasPrefix(string(der), "\x30") || !utf8.ValidString(s) {
			t.Fatalf("FormatDN(%x) = %q", der, s)
		}
	})
}
