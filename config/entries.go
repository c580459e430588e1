package config

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfigEntry is one broker config as DescribeConfigs reports it for
// a BROKER resource.
type BrokerConfigEntry struct {
	Name, Value string
	Source      kmsg.ConfigSource
	Sensitive   bool
	// ReadOnly is always true: kbroker has no dynamic broker configs, so
	// AlterConfigs on a broker cannot change anything.
	ReadOnly bool
	Type     kmsg.ConfigType
}

// BrokerConfigEntries lists every broker config we know, in name order,
// with its value as written (or Kafka's default). Nullable keys that are
// unset (log.retention.ms, advertised.listeners ...) are left out: the
// entry has no value to report, and the key that does apply is listed.
func (c *Config) BrokerConfigEntries() []BrokerConfigEntry {
	out := make([]BrokerConfigEntry, 0, len(brokerDefs))
	for _, name := range sortedKeys(brokerDefIndex) {
		d := brokerDefs[brokerDefIndex[name]]
		v := c.values[name]
		if v == "" && d.nullable {
			continue
		}
		source := kmsg.ConfigSourceDefaultConfig
		if c.set[name] {
			source = kmsg.ConfigSourceStaticBrokerConfig
		}
		out = append(out, BrokerConfigEntry{Name: name, Value: v, Source: source, ReadOnly: true, Type: d.typ, Sensitive: d.typ == tPassword})
	}
	return out
}
