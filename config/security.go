package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kbroker/kbroker/security/acl"
)

// Security protocols a listener can speak (Kafka's SecurityProtocol enum).
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// UsesTLS reports whether connections under protocol p are TLS.
func UsesTLS(p string) bool { return p == SSL || p == SASLSSL }

// UsesSASL reports whether connections under protocol p authenticate with SASL.
func UsesSASL(p string) bool { return p == SASLPlaintext || p == SASLSSL }

// Mechanisms kbroker implements. GSSAPI (Kerberos) and OAUTHBEARER are
// not: a SASL listener that enables only those refuses to start.
var supportedMechanisms = map[string]bool{"PLAIN": true, "SCRAM-SHA-256": true, "SCRAM-SHA-512": true}

// ListenerSecurity is what one listener needs to secure its connections,
// with that listener's overrides applied: Kafka lets every ssl.* and sasl.*
// key be given as listener.name.<listener>.<key> (the listener name in
// lower case), which wins over the plain key on that listener only.
type ListenerSecurity struct {
	Name     string
	Protocol string
	// SSL holds every ssl.* key, defaults included, for security/tlsconfig.
	SSL map[string]string
	// SASLMechanisms is sasl.enabled.mechanisms, upper case.
	SASLMechanisms []string
	// JAAS maps an enabled mechanism to its
	// listener.name.<l>.<mechanism>.sasl.jaas.config text, when given.
	JAAS map[string]string
	// ReauthMax is connections.max.reauth.ms (KIP-368); zero disables it.
	ReauthMax time.Duration
	// SASLMaxReceiveSize is sasl.server.max.receive.size: the largest SASL
	// token read before authentication.
	SASLMaxReceiveSize int32
	// PrincipalMappingRules is ssl.principal.mapping.rules.
	PrincipalMappingRules string
}

// listenerPrefix is where Kafka's per-listener overrides live (its
// ListenerName.configPrefix).
const listenerPrefix = "listener.name."

// acceptListenerOverride takes key if it is a per-listener override of a
// security key, storing it under the listener's upper-case name.
func (c *Config) acceptListenerOverride(key, value string) bool {
	rest, ok := strings.CutPrefix(key, listenerPrefix)
	if !ok {
		return false
	}
	listener, sub, ok := strings.Cut(rest, ".")
	if !ok || listener == "" || !overridableKey(sub) {
		return false
	}
	if c.listenerOverrides == nil {
		c.listenerOverrides = map[string]map[string]string{}
	}
	l := strings.ToUpper(listener)
	if c.listenerOverrides[l] == nil {
		c.listenerOverrides[l] = map[string]string{}
	}
	c.listenerOverrides[l][sub] = value
	return true
}

// overridableKey is a key Kafka reads per listener: the ssl.* and sasl.*
// keys, connections.max.reauth.ms, and <mechanism>.sasl.jaas.config.
func overridableKey(sub string) bool {
	if mech, ok := strings.CutSuffix(sub, ".sasl.jaas.config"); ok && mech != "" && !strings.Contains(mech, ".") {
		return true
	}
	if sub == "connections.max.reauth.ms" {
		return true
	}
	_, known := brokerDefIndex[sub]
	return known && (strings.HasPrefix(sub, "ssl.") || strings.HasPrefix(sub, "sasl."))
}

// listenerValue is key on listener, its override first.
func (c *Config) listenerValue(listener, key string) string {
	if v, ok := c.listenerOverrides[listener][key]; ok {
		return v
	}
	return c.values[key]
}

// SecurityProtocol is listener's protocol from listener.security.protocol.map.
func (c *Config) SecurityProtocol(listener string) string {
	return c.ListenerSecurityProtocolMap[listener]
}

// ListenerSecurity resolves the security settings of listener.
func (c *Config) ListenerSecurity(listener string) ListenerSecurity {
	s := ListenerSecurity{
		Name:                  listener,
		Protocol:              c.SecurityProtocol(listener),
		SSL:                   map[string]string{},
		JAAS:                  map[string]string{},
		PrincipalMappingRules: c.listenerValue(listener, "ssl.principal.mapping.rules"),
	}
	for _, d := range brokerDefs {
		if strings.HasPrefix(d.name, "ssl.") {
			s.SSL[d.name] = c.listenerValue(listener, d.name)
		}
	}
	for _, m := range parseList(c.listenerValue(listener, "sasl.enabled.mechanisms")) {
		m = strings.ToUpper(m)
		s.SASLMechanisms = append(s.SASLMechanisms, m)
		if v, ok := c.listenerOverrides[listener][strings.ToLower(m)+".sasl.jaas.config"]; ok {
			s.JAAS[m] = v
		}
	}
	if ms, err := strconv.ParseInt(c.listenerValue(listener, "connections.max.reauth.ms"), 10, 64); err == nil && ms > 0 {
		s.ReauthMax = msDuration(ms, time.Millisecond)
	}
	if n, err := strconv.ParseInt(c.listenerValue(listener, "sasl.server.max.receive.size"), 10, 32); err == nil {
		s.SASLMaxReceiveSize = int32(n)
	}
	return s
}

// InterBrokerSecurity is the inter-broker listener's settings: what every
// broker-to-broker client (replica fetchers, the controller's channel,
// transaction markers) dials with.
func (c *Config) InterBrokerSecurity() ListenerSecurity {
	return c.ListenerSecurity(c.InterBrokerListenerName)
}

// deriveSecurity checks what Kafka checks at start-up, and what kbroker
// cannot serve: a SASL listener needs an enabled mechanism we implement,
// and the inter-broker mechanism must be enabled on the inter-broker
// listener.
func (c *Config) deriveSecurity() error {
	for _, l := range c.Listeners {
		s := c.ListenerSecurity(l.Name)
		if !UsesSASL(s.Protocol) {
			continue
		}
		ok := false
		for _, m := range s.SASLMechanisms {
			if supportedMechanisms[m] {
				ok = true
			}
		}
		if !ok {
			return &ValueError{Key: "sasl.enabled.mechanisms", Value: strings.Join(s.SASLMechanisms, ","),
				Reason: fmt.Sprintf("listener %s uses %s but enables no mechanism kbroker implements (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)", l.Name, s.Protocol)}
		}
	}
	ib := c.InterBrokerSecurity()
	if UsesSASL(ib.Protocol) {
		m := strings.ToUpper(c.listenerValue(c.InterBrokerListenerName, "sasl.mechanism.inter.broker.protocol"))
		enabled := false
		for _, e := range ib.SASLMechanisms {
			enabled = enabled || e == m
		}
		if !enabled {
			return &ValueError{Key: "sasl.mechanism.inter.broker.protocol", Value: m,
				Reason: fmt.Sprintf("must be included in sasl.enabled.mechanisms of listener %s when SASL is used for inter-broker communication", c.InterBrokerListenerName)}
		}
	}
	if _, err := acl.ParseSuperUsers(c.values["super.users"]); err != nil {
		return &ValueError{Key: "super.users", Value: c.values["super.users"], Reason: err.Error()}
	}
	switch c.AuthorizerClassName {
	case "", AclAuthorizerClass, StandardAuthorizerClass:
	default:
		return &ValueError{Key: "authorizer.class.name", Value: c.AuthorizerClassName,
			Reason: "kbroker implements " + AclAuthorizerClass + " only"}
	}
	return nil
}

// SASLMechanismInterBroker is the mechanism brokers authenticate to each
// other with.
func (c *Config) SASLMechanismInterBroker() string {
	return strings.ToUpper(c.listenerValue(c.InterBrokerListenerName, "sasl.mechanism.inter.broker.protocol"))
}

// Authorizer class names turning the ACL authorizer on. Kafka's KRaft
// StandardAuthorizer has the same semantics; it is accepted so a config
// written for it also works.
const (
	AclAuthorizerClass      = "kafka.security.authorizer.AclAuthorizer"
	StandardAuthorizerClass = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
)

// AuthorizerEnabled reports whether requests are checked against ACLs.
func (c *Config) AuthorizerEnabled() bool { return c.AuthorizerClassName != "" }

// SuperUsers is super.users: principals separated by semicolons, as
// Kafka's AclAuthorizer splits them (deriveSecurity checked them).
func (c *Config) SuperUsers() []string {
	out, _ := acl.ParseSuperUsers(c.values["super.users"])
	return out
}
