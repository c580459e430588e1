package principal

import (
	"errors"
	"strings"
	"testing"
)

// The cases in this file are Kafka's SslPrincipalMapperTest.

func TestParseSSLMappingRulesValid(t *testing.T) {
	for _, rules := range []string{
		"DEFAULT",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
		"RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
		"RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
		"RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
	} {
		if _, err := ParseSSLMappingRules(rules); err != nil {
			t.Errorf("ParseSSLMappingRules(%q): %v", rules, err)
		}
	}
}

func TestParseSSLMappingRulesInvalid(t *testing.T) {
	for _, rules := range []string{
		"default",
		"DEFAUL",
		"DEFAULT/L",
		"DEFAULT/U",
		"RULE:CN=(.*?),OU=ServiceUsers.*/$1",
		"rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
		"RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
		// Ours: a pattern that does not compile.
		"RULE:^CN=(.*/$1/",
	} {
		_, err := ParseSSLMappingRules(rules)
		if !errors.Is(err, ErrInvalidRule) {
			t.Errorf("ParseSSLMappingRules(%q) = %v, want ErrInvalidRule", rules, err)
		}
	}
}

func TestParseSSLMappingRulesErrorText(t *testing.T) {
	_, err := ParseSSLMappingRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U")
	want := "invalid ssl.principal.mapping.rules: Invalid rule: `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U`, unmatched substring: `/U`"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestSSLMapperName(t *testing.T) {
	m, err := ParseSSLMappingRules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, " +
		"RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, " +
		"RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, " +
		"RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, " +
		"DEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dn, want string }{
		{"CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"},
		{"CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"},
		{"cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"},
		{"cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"},
		{"OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"},
	} {
		got, err := m.Name(c.dn)
		if err != nil || got != c.want {
			t.Errorf("Name(%q) = %q, %v; want %q", c.dn, got, err, c.want)
		}
	}
}

func TestSSLMapperRulesSplitting(t *testing.T) {
	for _, c := range []struct{ rules, want string }{
		{"", "[]"},
		{"DEFAULT", "[DEFAULT]"},
		{"RULE://", "[RULE:/]"},
		{"RULE:/.*/", "[RULE:/.*]"},
		{"RULE:/.*/L", "[RULE:/.*/L]"},
		{"RULE://,DEFAULT", "[RULE:/, DEFAULT]"},
		{"  RULE:// ,  DEFAULT  ", "[RULE:/, DEFAULT]"},
		{"  RULE:   /     / ,  DEFAULT  ", "[RULE:   /     , DEFAULT]"},
		{"  RULE:  /     /U   ,DEFAULT  ", "[RULE:  /     /U, DEFAULT]"},
		{"  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ", "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]"},
		// Empty rules are ignored.
		{",   , , ,      , , ,   ", "[]"},
		{",,RULE://,,,DEFAULT,,", "[RULE:/, DEFAULT]"},
		{",  , RULE: /   /    ,,,   DEFAULT, ,   ", "[RULE: /   , DEFAULT]"},
		{"     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,", "[RULE:   /  /U, DEFAULT]"},
		// Escape sequences.
		{`RULE:\/\\\(\)\n\t/\/\//`, `[RULE:\/\\\(\)\n\t/\/\/]`},
		{`RULE:\**\/+/*/L,RULE:\/*\**/**/`, `[RULE:\**\/+/*/L, RULE:\/*\**/**]`},
		// Rules rule.
		{`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`,
			`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`},
	} {
		m, err := ParseSSLMappingRules(c.rules)
		if err != nil {
			t.Errorf("ParseSSLMappingRules(%q): %v", c.rules, err)
			continue
		}
		if got, want := m.String(), "SslPrincipalMapper(rules = "+c.want+")"; got != want {
			t.Errorf("ParseSSLMappingRules(%q) = %s, want %s", c.rules, got, want)
		}
	}
}

func TestSSLMapperCommaWithWhitespace(t *testing.T) {
	m, err := ParseSSLMappingRules(`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Name(`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`)
	if want := `Tkac\, Adam`; err != nil || got != want {
		t.Errorf("Name = %q, %v; want %q", got, err, want)
	}
}

// The cases below are ours: Java's replaceAll and replacement rules that
// Kafka's mapper inherits.
func TestSSLMapperJavaReplacementRules(t *testing.T) {
	for _, c := range []struct {
		name, rules, dn, want, wantErr string
	}{
		{"unanchored pattern also replaces the empty match at the end",
			"RULE:(.*)/User-$1/", "CN=a,O=b", "User-CN=a,O=bUser-", ""},
		{"anchored pattern replaces once", "RULE:^(.*)$/User-$1/", "CN=a,O=b", "User-CN=a,O=b", ""},
		{"group past the count is literal", "RULE:^CN=([a-z]+)$/$1-$2/", "CN=abc", "abc-$2", ""},
		{"two-digit reference shortens", "RULE:^CN=([a-z]+)$/$12/", "CN=abc", "abc2", ""},
		{"named group", "RULE:^CN=(?<user>[a-z]+)$/${user}/U", "CN=abc", "ABC", ""},
		{"backslash escapes in the replacement", `RULE:^CN=([a-z]+)$/\$1=$1/`, "CN=abc", "$1=abc", ""},
		{"no groups: $1 is an error", "RULE:^CN=abc$/$1/", "CN=abc", "", "no group 1"},
		// The grammar keeps backslashes in pairs, so "\\" reaches Java's
		// replacement rules and becomes one literal backslash.
		{"escaped backslash", `RULE:^CN=(abc)$/$1\\/`, "CN=abc", `abc\`, ""},
		{"trailing $ is an error", `RULE:^CN=(abc)$/$1$/`, "CN=abc", "", "group index is missing"},
		{"unknown named group", "RULE:^CN=(abc)$/${x}/", "CN=abc", "", "no group with name {x}"},
		// Kafka's escapeLiteralBackReferences reuses offsets from the
		// original string after inserting a backslash, so the second missing
		// group is escaped one place early and stays a reference.
		{"Kafka's second missing reference", "RULE:^CN=(abc)$/$5$6/", "CN=abc", "", "no group 6"},
		{"Java dot stops at a carriage return", "RULE:^CN=(.*)$/$1/", "CN=a\rb", "", "No rules apply"},
		{"first matching rule wins", "RULE:^CN=(x)$/$1/,RULE:^CN=(.*)$/$1/L,DEFAULT", "CN=ABC", "abc", ""},
		{"no rule applies", "RULE:^CN=(x)$/$1/", "CN=y", "", "No rules apply to CN=y, rules [RULE:^CN=(x)$/$1]"},
	} {
		m, err := ParseSSLMappingRules(c.rules)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got, err := m.Name(c.dn)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: Name(%q) = %q, %v; want error containing %q", c.name, c.dn, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: Name(%q) = %q, %v; want %q", c.name, c.dn, got, err, c.want)
		}
	}
}

func TestSSLMapperNoMatchingRule(t *testing.T) {
	m, err := ParseSSLMappingRules("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Name("CN=x"); !errors.Is(err, ErrNoMatchingRule) {
		t.Errorf("Name on an empty rule list = %v, want ErrNoMatchingRule", err)
	}
}
