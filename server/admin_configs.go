package server

import (
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
)

// describedConfig is one config as DescribeConfigs and CreateTopics v5+
// report it.
type describedConfig struct {
	Name        string
	Value       *string
	ReadOnly    bool
	Source      kmsg.ConfigSource
	IsSensitive bool
	Type        kmsg.ConfigType
	Doc         *string
	Synonyms    []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
}

// topicBrokerSynonyms lists, for topic configs whose broker default comes
// in several units, every broker key in Kafka's precedence order
// (LogConfig.TopicConfigSynonyms); other configs have their one
// BrokerConfig.
var topicBrokerSynonyms = map[string][]string{
	"retention.ms":      {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	"segment.ms":        {"log.roll.ms", "log.roll.hours"},
	"segment.jitter.ms": {"log.roll.jitter.ms", "log.roll.jitter.hours"},
	"flush.ms":          {"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
}

func brokerSynonymsOf(d config.TopicConfigDef) []string {
	if ks, ok := topicBrokerSynonyms[d.Name]; ok {
		return ks
	}
	if d.BrokerConfig == "" {
		return nil
	}
	return []string{d.BrokerConfig}
}

// kafkaDefaults holds every broker key's Kafka default, as a config built
// from an empty file reports it: the DEFAULT_CONFIG synonyms.
var kafkaDefaults = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	c, _, err := config.FromMap(map[string]string{})
	if err != nil {
		return m
	}
	for _, e := range c.BrokerConfigEntries() {
		m[e.Name] = e.Value
	}
	return m
})

// topicConfigEntries describes every topic config (or only names, when
// non-nil) given a topic's overrides, as Kafka's ConfigHelper does: an
// override is DYNAMIC_TOPIC_CONFIG, otherwise the broker value is
// STATIC_BROKER_CONFIG if server.properties set it, else DEFAULT_CONFIG.
func (b *Broker) topicConfigEntries(overrides map[string]string, synonyms, docs bool, names ...string) []describedConfig {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	cfg := b.current()
	defs := config.TopicConfigDefs()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	out := make([]describedConfig, 0, len(defs))
	for _, d := range defs {
		if len(want) > 0 && !want[d.Name] {
			continue
		}
		e := describedConfig{Name: d.Name, Type: d.Type}
		if v, ok := overrides[d.Name]; ok {
			e.Value, e.Source = nullableString(v), kmsg.ConfigSourceDynamicTopicConfig
		} else {
			v, src := cfg.TopicDefault(d.Name)
			e.Value, e.Source = nullableString(v), src
		}
		if docs {
			e.Doc = nullableString(d.Doc)
		}
		if synonyms {
			e.Synonyms = topicSynonyms(cfg, d, overrides)
		}
		out = append(out, e)
	}
	return out
}

// topicSynonyms lists where a topic config's value could come from, highest
// precedence first: the topic override, then the broker keys by layer
// (dynamic per broker, dynamic default, server.properties, Kafka's
// default), as ConfigHelper.createTopicConfigEntry lists them.
func topicSynonyms(cfg *config.Config, d config.TopicConfigDef, overrides map[string]string) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	add := func(name, value string, src kmsg.ConfigSource) {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Value, s.Source = name, nullableString(value), src
		out = append(out, s)
	}
	if v, ok := overrides[d.Name]; ok {
		add(d.Name, v, kmsg.ConfigSourceDynamicTopicConfig)
	}
	if keys := brokerSynonymsOf(d); len(keys) > 0 {
		for _, syn := range cfg.TopicDefaultSynonyms(keys[0], kafkaDefaults()) {
			add(syn.Name, syn.Value, syn.Source)
		}
	}
	return out
}

// brokerConfigEntries describes this broker's configuration (perBroker),
// or the cluster-wide dynamic defaults, as ConfigHelper.createBrokerConfigEntry
// does: the source is the highest layer that sets the key, and for the
// defaults only that layer is listed.
func (b *Broker) brokerConfigEntries(perBroker, synonyms, docs bool, names ...string) []describedConfig {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	cfg := b.current()
	defaults := kafkaDefaults()
	var entries []config.BrokerConfigEntry
	if perBroker {
		entries = cfg.BrokerConfigEntries()
	} else {
		for _, e := range cfg.BrokerConfigEntries() {
			if v, ok := cfg.DynamicDefaultConfigs()[e.Name]; ok {
				e.Value, e.Source = v, kmsg.ConfigSourceDynamicDefaultBrokerConfig
				entries = append(entries, e)
			}
		}
	}
	var out []describedConfig
	for _, e := range entries {
		if len(want) > 0 && !want[e.Name] {
			continue
		}
		d := describedConfig{Name: e.Name, Value: nullableString(e.Value), ReadOnly: e.ReadOnly, Source: e.Source, IsSensitive: e.Sensitive, Type: e.Type}
		if e.Sensitive {
			d.Value = nil
		}
		if docs {
			d.Doc = nil // Kafka's broker docs are long prose we do not carry.
		}
		if synonyms {
			for _, syn := range cfg.ConfigSynonyms(e.Name, defaults) {
				if !perBroker && syn.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
					continue
				}
				s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				s.Name, s.Value, s.Source = syn.Name, nullableString(syn.Value), syn.Source
				if e.Sensitive {
					s.Value = nil
				}
				d.Synonyms = append(d.Synonyms, s)
			}
		}
		out = append(out, d)
	}
	return out
}

// brokerResourceError checks a BROKER resource name: this broker's id, or
// "" for the cluster-wide default. Kafka answers INVALID_REQUEST for
// anything else, in ConfigHelper's words for DescribeConfigs.
func (b *Broker) brokerResourceError(name string) *topicError {
	return b.checkBrokerResource(name, "Broker id must be an integer, but it is: %s", "Unexpected broker id, expected %d or empty string, but received %s")
}

func (b *Broker) checkBrokerResource(name, notNumber, notThis string) *topicError {
	if name == "" {
		return nil
	}
	id, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return newTopicError(kerr.InvalidRequest, notNumber, name)
	}
	if int32(id) != b.cfg.BrokerID {
		return newTopicError(kerr.InvalidRequest, notThis, b.cfg.BrokerID, name)
	}
	return nil
}

// brokerConfigRefused is ConfigAdminManager.validateBrokerConfigChange's
// answer: whatever DynamicBrokerConfig.validate throws, as INVALID_REQUEST
// with its message as is (KAFKA-13609 keeps the code).
func brokerConfigRefused(err error) *topicError {
	return newTopicError(kerr.InvalidRequest, "%s", err.Error())
}

// brokerConfigNotStored is ZkAdminManager.alterConfigs' answer to a change
// that validated but cannot be stored (a password without
// password.encoder.secret): INVALID_CONFIG naming the resource.
func brokerConfigNotStored(name, reason string) *topicError {
	return newTopicError(kerr.InvalidConfig,
		"Invalid config value for resource ConfigResource(type=BROKER, name='%s'): %s", name, reason)
}

// alterBrokerResourceError is ConfigAdminManager's check of an altered
// BROKER resource's name, made before anything else, in its words.
func (b *Broker) alterBrokerResourceError(name string) *topicError {
	return b.checkBrokerResource(name, "Node id must be an integer, but it is: %s", "Unexpected broker id, expected %d, but received %s")
}

// unknownTopicError is the answer for a config resource naming a topic that
// does not exist.
func unknownTopicError(name string) *topicError {
	return newTopicError(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", name)
}

// applyTopicConfigs validates and stores a topic's complete override set.
func (b *Broker) applyTopicConfigs(topic string, overrides map[string]string, validateOnly bool) error {
	if b.topic(topic) == nil {
		return unknownTopicError(topic)
	}
	if err := config.ValidateTopicConfigs(overrides); err != nil {
		return &configError{err}
	}
	if validateOnly {
		return nil
	}
	return b.setTopicConfigs(topic, overrides)
}

// resourceTypeError answers a resource type this broker has no configs for.
func resourceTypeError(t kmsg.ConfigResourceType) *topicError {
	return newTopicError(kerr.InvalidRequest, "Unsupported resource type %s", fmt.Sprint(t))
}
