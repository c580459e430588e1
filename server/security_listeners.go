package server

import (
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/principal"
	"github.com/kbroker/kbroker/security/sasl"
	"github.com/kbroker/kbroker/security/tlsconfig"
)

// listenerConfig builds how a listener secures its connections from its
// resolved settings. A listener that cannot be secured as configured (a
// keystore that does not open, a SASL mechanism without its JAAS
// configuration) stops the broker from starting, naming the key.
func (b *Broker) listenerConfig(s config.ListenerSecurity) (protocol.ListenerConfig, error) {
	lc := protocol.ListenerConfig{Name: s.Name, ReauthMax: s.ReauthMax, SASLMaxReceiveSize: int(s.SASLMaxReceiveSize)}
	if config.UsesTLS(s.Protocol) {
		tc, err := tlsconfig.Server(s.SSL)
		if err != nil {
			return lc, fmt.Errorf("listener %s: %w", s.Name, err)
		}
		r := newReloadableTLS(tc, s.SSL)
		b.listenerTLS[s.Name] = r
		lc.TLS = r.serverConfig()
		mapper, err := principal.ParseSSLMappingRules(s.PrincipalMappingRules)
		if err != nil {
			return lc, fmt.Errorf("listener %s: ssl.principal.mapping.rules: %w", s.Name, err)
		}
		lc.TLSPrincipal = func(cs tls.ConnectionState) (string, error) {
			if len(cs.PeerCertificates) == 0 {
				return protocol.Anonymous, nil
			}
			p, err := principal.FromCertificate(cs.PeerCertificates[0], mapper)
			if err != nil {
				return "", err
			}
			return p.String(), nil
		}
	}
	if config.UsesSASL(s.Protocol) {
		m, err := b.saslMechanisms(s)
		if err != nil {
			return lc, fmt.Errorf("listener %s: %w", s.Name, err)
		}
		lc.SASL = m
	}
	return lc, nil
}

// listenerSASL is one listener's enabled mechanisms.
type listenerSASL struct {
	b          *Broker
	mechanisms []string
	// verifyPlain checks PLAIN's users and passwords from the listener's
	// JAAS configuration.
	verifyPlain func(user, password string) bool
}

func (b *Broker) saslMechanisms(s config.ListenerSecurity) (*listenerSASL, error) {
	l := &listenerSASL{b: b}
	for _, m := range s.SASLMechanisms {
		switch m {
		case "PLAIN":
			jaas, ok := s.JAAS[m]
			if !ok {
				return nil, fmt.Errorf("PLAIN is enabled but listener.name.%s.plain.sasl.jaas.config is not set", strings.ToLower(s.Name))
			}
			modules, err := sasl.ParseJAAS(jaas)
			if err != nil {
				return nil, fmt.Errorf("listener.name.%s.plain.sasl.jaas.config: %w", strings.ToLower(s.Name), err)
			}
			l.verifyPlain = sasl.PlainVerifier(sasl.PlainUsers(modules))
		case sasl.ScramSHA256, sasl.ScramSHA512:
		default:
			// Kafka would load GSSAPI or OAUTHBEARER; config.Load
			// already refused a listener left with none we implement.
			b.logger.Warn("SASL mechanism not implemented; not offered", "listener", s.Name, "mechanism", m)
			continue
		}
		l.mechanisms = append(l.mechanisms, m)
	}
	return l, nil
}

func (l *listenerSASL) Mechanisms() []string { return l.mechanisms }

func (l *listenerSASL) New(mechanism string) (protocol.SASLServer, bool) {
	enabled := false
	for _, m := range l.mechanisms {
		enabled = enabled || m == mechanism
	}
	if !enabled {
		return nil, false
	}
	if mechanism == "PLAIN" {
		return sasl.NewPlainServer(l.verifyPlain), true
	}
	s, err := sasl.NewScramServer(mechanism, func(user string) (sasl.ScramCredential, bool) {
		return l.b.scramCredential(mechanism, user)
	}, sasl.RandomNonce)
	if err != nil {
		return nil, false
	}
	return s, true
}

// scramCredential reads the user's credential for mechanism from the
// metadata store, so a credential altered on any broker is in force on
// the next authentication.
func (b *Broker) scramCredential(mechanism, user string) (sasl.ScramCredential, bool) {
	if b.security == nil {
		return sasl.ScramCredential{}, false
	}
	configs, err := b.security.UserConfig(user)
	if err != nil {
		b.logger.Warn("cannot read SCRAM credentials", "user", user, "err", err)
		return sasl.ScramCredential{}, false
	}
	text, ok := configs[mechanism]
	if !ok {
		return sasl.ScramCredential{}, false
	}
	cred, err := sasl.ParseScramCredential(text)
	if err != nil {
		b.logger.Warn("unreadable SCRAM credential", "user", user, "mechanism", mechanism, "err", err)
		return sasl.ScramCredential{}, false
	}
	return cred, true
}
