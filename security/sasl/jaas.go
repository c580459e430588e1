package sasl

import (
	"strconv"
	"strings"
)

// LoginModule is one entry of a JAAS configuration: Java's
// AppConfigurationEntry as Kafka's JaasConfig builds it from the text of
// sasl.jaas.config.
type LoginModule struct {
	Class   string            // the login module class name
	Flag    string            // REQUIRED, REQUISITE, SUFFICIENT or OPTIONAL
	Options map[string]string // never nil
}

// Login module classes whose options this package reads.
const (
	PlainLoginModuleClass = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramLoginModuleClass = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// MaxJAASSize bounds ParseJAAS's input; configuration values are far smaller.
const MaxJAASSize = 1 << 20

// ParseJAAS parses JAAS configuration text of the form Kafka's JaasConfig
// accepts in sasl.jaas.config:
//
//	<class> <flag> [<key>=<value> ...]; [<class> <flag> ...;]
//
// tokenized as java.io.StreamTokenizer does (see jaasTokenizer): names and
// values are words or quoted strings with Java escapes; a bare number is not
// a value. Errors carry Kafka's texts. One divergence: Kafka keeps an option
// whose name is a bare number under a null key; that is an error here.
func ParseJAAS(s string) ([]LoginModule, error) {
	if len(s) > MaxJAASSize {
		return nil, errorString("JAAS config of " + strconv.Itoa(len(s)) + " bytes exceeds the bound of " + strconv.Itoa(MaxJAASSize) + " bytes")
	}
	t := newJAASTokenizer(s)
	var modules []LoginModule
	for {
		tok := t.next()
		if tok.kind == tokEOF {
			break
		}
		m, err := parseJAASEntry(t, tok)
		if err != nil {
			return nil, err
		}
		modules = append(modules, m)
	}
	if len(modules) == 0 {
		return nil, errorString("Login module not specified in JAAS config")
	}
	return modules, nil
}

func parseJAASEntry(t *jaasTokenizer, first jaasToken) (LoginModule, error) {
	m := LoginModule{Class: first.text, Options: map[string]string{}}
	tok := t.next()
	if tok.kind == tokEOF {
		return m, errorString("Login module control flag not specified in JAAS config")
	}
	if !tok.hasText() {
		return m, errorString("Login module control flag is not available in the JAAS config")
	}
	switch f := strings.ToUpper(tok.text); f {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		m.Flag = f
	default:
		return m, errorString("Invalid login module control flag '" + tok.text + "' in JAAS config")
	}
	for {
		tok = t.next()
		if tok.kind == tokEOF || tok.kind == tokChar && tok.ch == ';' {
			break
		}
		key := "null" // how Java prints a missing sval in the message below
		if tok.hasText() {
			key = tok.text
		}
		if eq := t.next(); eq.kind != tokChar || eq.ch != '=' {
			return m, errValueNotSpecified(key)
		}
		val := t.next()
		if !val.hasText() {
			return m, errValueNotSpecified(key)
		}
		if !tok.hasText() {
			return m, errorString("Invalid option name in JAAS config")
		}
		m.Options[key] = val.text
	}
	if tok.kind != tokChar || tok.ch != ';' {
		return m, errorString("JAAS config entry not terminated by semi-colon")
	}
	// Java's AppConfigurationEntry refuses an empty or missing class name.
	if !first.hasText() || first.text == "" {
		return m, errorString("Login module class name not specified in JAAS config")
	}
	return m, nil
}

func errValueNotSpecified(key string) error {
	return errorString("Value not specified for key '" + key + "' in JAAS config")
}

// ParseJAASProperty parses a sasl.jaas.config value, which Kafka's
// JaasContext requires to hold exactly one login module.
func ParseJAASProperty(s string) (LoginModule, error) {
	ms, err := ParseJAAS(s)
	if err != nil {
		return LoginModule{}, err
	}
	if len(ms) != 1 {
		return LoginModule{}, errorString("JAAS config property contains " + strconv.Itoa(len(ms)) + " login modules, should be 1 module")
	}
	return ms[0], nil
}

// PlainUsers collects the user_<name>="<password>" options of the
// PlainLoginModule entries, which is where Kafka's
// PlainServerCallbackHandler looks passwords up. As in
// JaasContext.configEntryOption, the first module defining a user wins.
func PlainUsers(modules []LoginModule) map[string]string {
	users := map[string]string{}
	for _, m := range modules {
		if m.Class != PlainLoginModuleClass {
			continue
		}
		for k, v := range m.Options {
			name, ok := strings.CutPrefix(k, "user_")
			if !ok {
				continue
			}
			if _, seen := users[name]; !seen {
				users[name] = v
			}
		}
	}
	return users
}

// ClientCredentials returns the username and password options of the first
// module that has a username option, as PlainLoginModule and
// ScramLoginModule read them for a client (an inter-broker connection, say).
// ok is false unless that module has both.
func ClientCredentials(modules []LoginModule) (user, password string, ok bool) {
	for _, m := range modules {
		u, hasUser := m.Options["username"]
		if !hasUser {
			continue
		}
		p, hasPass := m.Options["password"]
		return u, p, hasPass
	}
	return "", "", false
}
