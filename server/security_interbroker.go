package server

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/security/sasl"
	"github.com/kbroker/kbroker/security/tlsconfig"
)

// interBrokerClientOpts secures the clients one broker opens to another
// the way Kafka's brokers do it: with the inter-broker listener's own
// ssl.* settings (its keystore doubles as the client certificate, its
// truststore verifies the peer) and, on a SASL listener,
// sasl.mechanism.inter.broker.protocol with the username and password of
// that mechanism's JAAS configuration on the listener.
func interBrokerClientOpts(cfg *config.Config) ([]kgo.Opt, error) {
	s := cfg.InterBrokerSecurity()
	var opts []kgo.Opt
	if config.UsesTLS(s.Protocol) {
		tc, err := tlsconfig.Client(s.SSL, "")
		if err != nil {
			return nil, fmt.Errorf("inter-broker listener %s: %w", s.Name, err)
		}
		// franz-go sets ServerName to the host it dials when it is empty,
		// which is what endpoint identification checks.
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if !config.UsesSASL(s.Protocol) {
		return opts, nil
	}
	mech := cfg.SASLMechanismInterBroker()
	key := fmt.Sprintf("listener.name.%s.%s.sasl.jaas.config", strings.ToLower(s.Name), strings.ToLower(mech))
	jaas, ok := s.JAAS[mech]
	if !ok {
		return nil, fmt.Errorf("%s must give the username and password brokers authenticate to each other with", key)
	}
	modules, err := sasl.ParseJAAS(jaas)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	user, pass, ok := sasl.ClientCredentials(modules)
	if !ok {
		return nil, fmt.Errorf("%s has no username and password options for inter-broker authentication", key)
	}
	switch mech {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
	case sasl.ScramSHA256:
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
	case sasl.ScramSHA512:
		opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("sasl.mechanism.inter.broker.protocol %s is not implemented", mech)
	}
	return opts, nil
}
