package principal

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultSSLMappingRules is the default of ssl.principal.mapping.rules
// (Kafka's BrokerSecurityConfigs.DEFAULT_SSL_PRINCIPAL_MAPPING_RULES): the
// principal name is the distinguished name unchanged.
const DefaultSSLMappingRules = "DEFAULT"

// SSLMapper maps a certificate's distinguished name to a principal name
// with ssl.principal.mapping.rules (Kafka's SslPrincipalMapper). It never
// changes after ParseSSLMappingRules, so it may be shared between
// goroutines.
type SSLMapper struct {
	rules []sslRule
}

type sslRule struct {
	isDefault   bool
	pattern     *javaRegexp // nil for DEFAULT
	full        *javaRegexp // pattern anchored at both ends (Matcher.matches)
	replacement string
	toLower     bool
	toUpper     bool
}

// The rule grammar, as Kafka's SslPrincipalMapper.RULE_PATTERN writes it:
// DEFAULT, or RULE:pattern/replacement/ with an optional L or U, where a
// backslash escapes any character (a '/' in particular) and anything else
// is an empty rule. Java's \s is spelled out because Go's lacks \x0B.
const (
	rulePattern  = `(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`
	javaSpace    = `[ \t\n\x0B\f\r]`
	ruleSplitter = javaSpace + `*(` + rulePattern + `)` + javaSpace + `*(,` + javaSpace + `*|$)`
)

var (
	ruleSplitterRe = mustCompileJava(ruleSplitter)
	ruleParserRe   = mustCompileJava(`\A(?:` + rulePattern + `)`)
)

func mustCompileJava(p string) *javaRegexp {
	re, err := compileJava(p, false)
	if err != nil {
		panic(err)
	}
	return re
}

// ErrInvalidRule is wrapped by every ParseSSLMappingRules error.
var ErrInvalidRule = errors.New("invalid ssl.principal.mapping.rules")

// ErrNoMatchingRule is wrapped by the error of Name when no rule applies
// (Kafka's SslPrincipalMapper.NoMatchingRule).
var ErrNoMatchingRule = errors.New("no SSL principal mapping rule applies")

// ParseSSLMappingRules parses the value of ssl.principal.mapping.rules
// (Kafka's SslPrincipalMapper.fromRules): comma-separated rules, each
// DEFAULT or RULE:pattern/replacement/[LU]. Empty rules are skipped, so ""
// gives a mapper that matches nothing (pass DefaultSSLMappingRules when the
// property is unset). Patterns are Java regular expressions compiled with
// Go's regexp; doc.go lists where the two differ.
func ParseSSLMappingRules(s string) (*SSLMapper, error) {
	m := &SSLMapper{}
	for _, rule := range splitRules(s) {
		r, ok, err := parseRule(rule)
		if err != nil {
			return nil, err
		}
		if ok {
			m.rules = append(m.rules, r)
		}
	}
	return m, nil
}

// splitRules cuts the rules apart with Kafka's RULE_SPLITTER, run with
// Java's find() loop over the trimmed string.
func splitRules(s string) []string {
	s = javaTrim(s)
	var rules []string
	for _, m := range ruleSplitterRe.findAll(s) {
		if m[2] < 0 {
			rules = append(rules, "")
			continue
		}
		rules = append(rules, s[m[2]:m[3]])
	}
	return rules
}

// javaTrim is String.trim: it strips every character up to U+0020.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

func parseRule(rule string) (sslRule, bool, error) {
	m := ruleParserRe.re.FindStringSubmatchIndex(rule)
	if m == nil {
		return sslRule{}, false, fmt.Errorf("%w: Invalid rule: %s", ErrInvalidRule, rule)
	}
	if m[1] != len(rule) {
		return sslRule{}, false, fmt.Errorf("%w: Invalid rule: `%s`, unmatched substring: `%s`", ErrInvalidRule, rule, rule[m[1]:])
	}
	group := func(i int) (string, bool) {
		if m[2*i] < 0 {
			return "", false
		}
		return rule[m[2*i]:m[2*i+1]], true
	}
	if _, ok := group(1); ok {
		return sslRule{isDefault: true}, true, nil
	}
	pattern, ok := group(2)
	if !ok {
		return sslRule{}, false, nil // an empty rule
	}
	replacement, _ := group(4)
	flag, _ := group(6)
	re, err := compileJava(pattern, false)
	if err != nil {
		return sslRule{}, false, fmt.Errorf("%w: rule `%s`: pattern %q: %v", ErrInvalidRule, rule, pattern, err)
	}
	full, err := compileJava(pattern, true)
	if err != nil {
		return sslRule{}, false, fmt.Errorf("%w: rule `%s`: pattern %q: %v", ErrInvalidRule, rule, pattern, err)
	}
	return sslRule{
		pattern:     re,
		full:        full,
		replacement: replacement,
		toLower:     flag == "L",
		toUpper:     flag == "U",
	}, true, nil
}

// Name maps a distinguished name (as DistinguishedName renders it) to a
// principal name: the result of the first rule whose pattern matches the
// whole name. A rule's replacement that Java would reject (a reference to a
// missing group, a trailing backslash ...) is an error when that rule
// applies, as in Kafka. No applicable rule wraps ErrNoMatchingRule.
func (m *SSLMapper) Name(dn string) (string, error) {
	for _, r := range m.rules {
		name, ok, err := r.apply(dn)
		if err != nil {
			return "", fmt.Errorf("rule %s: %w", r, err)
		}
		if ok {
			return name, nil
		}
	}
	return "", fmt.Errorf("%w: No rules apply to %s, rules %s", ErrNoMatchingRule, dn, m.ruleList())
}

// apply is Kafka's SslPrincipalMapper.Rule.apply: when the pattern matches
// the whole name, the name is the replaceAll of the pattern over it (not
// just the one full match: a pattern such as "(.*)" also matches the empty
// string at the end, and Java replaces that too).
func (r sslRule) apply(dn string) (string, bool, error) {
	if r.isDefault {
		return dn, true, nil
	}
	if !r.full.re.MatchString(dn) {
		return "", false, nil
	}
	repl, err := escapeLiteralBackReferences(r.replacement, r.pattern.re.NumSubexp())
	if err != nil {
		return "", false, err
	}
	out, err := r.pattern.replaceAll(dn, repl)
	if err != nil {
		return "", false, err
	}
	switch {
	case r.toLower:
		out = strings.ToLower(out)
	case r.toUpper:
		out = strings.ToUpper(out)
	}
	return out, true, nil
}

// String is Kafka's Rule.toString.
func (r sslRule) String() string {
	if r.isDefault {
		return "DEFAULT"
	}
	s := "RULE:" + r.pattern.source + "/" + r.replacement
	switch {
	case r.toLower:
		s += "/L"
	case r.toUpper:
		s += "/U"
	}
	return s
}

func (m *SSLMapper) ruleList() string {
	parts := make([]string, len(m.rules))
	for i, r := range m.rules {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// String is Kafka's SslPrincipalMapper.toString, e.g.
// "SslPrincipalMapper(rules = [RULE:^CN=(.*?),.*$/$1/L, DEFAULT])".
func (m *SSLMapper) String() string {
	return "SslPrincipalMapper(rules = " + m.ruleList() + ")"
}
