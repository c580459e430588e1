package config

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfigEntry is one broker config as DescribeConfigs reports it for
// a BROKER resource.
type BrokerConfigEntry struct {
	Name, Value string
	Source      kmsg.ConfigSource
	Sensitive   bool
	// ReadOnly marks configs that cannot change at runtime
	// (DynamicBrokerConfig.AllDynamicConfigs lists those that can).
	ReadOnly bool
	Type     kmsg.ConfigType
}

// BrokerConfigEntries lists every broker config we know, in name order,
// with its current value (dynamic, static or Kafka's default), and then
// every other key the file or a dynamic layer set, as Kafka lists a
// config's originals beside its values. Nullable keys that are unset
// (log.retention.ms, advertised.listeners ...) are left out: the entry
// has no value to report, and the key that does apply is listed.
func (c *Config) BrokerConfigEntries() []BrokerConfigEntry {
	out := make([]BrokerConfigEntry, 0, len(brokerDefs))
	listed := make(map[string]bool, len(brokerDefs))
	for _, name := range sortedKeys(brokerDefIndex) {
		d := brokerDefs[brokerDefIndex[name]]
		v := c.values[name]
		if v == "" && d.nullable {
			continue
		}
		listed[name] = true
		out = append(out, BrokerConfigEntry{Name: name, Value: v, Source: c.Source(name), ReadOnly: !IsDynamicBrokerConfig(name), Type: d.typ, Sensitive: d.typ == tPassword})
	}
	extra := map[string]string{}
	for _, layer := range []map[string]string{c.static, c.dynDefault, c.dynBroker} {
		for k, v := range layer {
			if !listed[k] {
				extra[k] = v
			}
		}
	}
	for _, k := range sortedKeys(extra) {
		typ, ok := dynamicOnlyTypes[k]
		if !ok {
			typ = kmsg.ConfigTypeUnknown
		}
		if base, ok := listenerBase(k); ok {
			if i, ok := brokerDefIndex[base]; ok {
				typ = brokerDefs[i].typ
			}
		}
		// Kafka's maybeSensitive: a config it has no type for (a custom
		// one) may hold a secret, so its value is never shown.
		sensitive := typ == tPassword || typ == kmsg.ConfigTypeUnknown || IsPasswordConfig(k)
		out = append(out, BrokerConfigEntry{Name: k, Value: extra[k], Source: c.Source(k), ReadOnly: !IsDynamicBrokerConfig(k), Type: typ, Sensitive: sensitive})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
