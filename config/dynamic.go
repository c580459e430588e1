package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Dynamic broker configs (KIP-226). A broker's configuration has four
// layers, highest precedence first: its own dynamic configs
// (/config/brokers/<id>), the cluster-wide dynamic defaults
// (/config/brokers/<default>), server.properties, and Kafka's defaults.
// Only the keys below may be set dynamically; which ones, and the checks
// and messages, are Kafka 3.9's DynamicBrokerConfig and DynamicConfig.Broker
// (docs/dynamic-broker-configs.md).

// dynamicLogConfigs are the broker keys of topic configs
// (ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS: the first synonym of
// each, so log.retention.ms but not log.retention.hours), without
// log.message.format.version (DynamicLogConfig.ReconfigurableConfigs).
var dynamicLogConfigs = []string{
	"log.segment.bytes", "log.roll.ms", "log.roll.jitter.ms", "log.index.size.max.bytes",
	"log.flush.interval.messages", "log.flush.interval.ms", "log.retention.bytes", "log.retention.ms",
	"message.max.bytes", "log.index.interval.bytes", "log.cleaner.delete.retention.ms",
	"log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", "log.segment.delete.delay.ms",
	"log.cleaner.min.cleanable.ratio", "log.cleanup.policy", "unclean.leader.election.enable",
	"min.insync.replicas", "compression.type", "compression.gzip.level", "compression.lz4.level",
	"compression.zstd.level", "log.preallocate", "log.message.timestamp.type",
	"log.message.timestamp.difference.max.ms", "log.message.timestamp.before.max.ms",
	"log.message.timestamp.after.max.ms", "log.message.downconversion.enable",
	"log.local.retention.ms", "log.local.retention.bytes",
}

// dynamicSecurityConfigs may change only per listener, with the
// listener.name.<l>. prefix (SslConfigs.RECONFIGURABLE_CONFIGS).
var dynamicSecurityConfigs = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
}

// dynamicListenerConfigs is DynamicListenerConfig.ReconfigurableConfigs.
var dynamicListenerConfigs = []string{
	"advertised.listeners", "listeners", "listener.security.protocol.map",
	"principal.builder.class", "ssl.protocol", "ssl.provider", "ssl.cipher.suites", "ssl.enabled.protocols",
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
	"ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.endpoint.identification.algorithm",
	"ssl.secure.random.implementation", "ssl.client.auth", "ssl.engine.factory.class",
	"sasl.mechanism.inter.broker.protocol", "sasl.jaas.config", "sasl.enabled.mechanisms",
	"sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor",
	"sasl.kerberos.ticket.renew.jitter", "sasl.kerberos.min.time.before.relogin",
	"sasl.kerberos.principal.to.local.rules", "sasl.login.refresh.window.factor",
	"sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
	"sasl.login.refresh.buffer.seconds",
	"max.connections", "max.connection.creation.rate", "num.network.threads",
}

// dynamicOtherConfigs are the rest of AllDynamicConfigs (LogCleaner,
// DynamicThreadPool, SocketServer, DynamicProducerStateManagerConfig,
// DynamicRemoteLogConfig, metric reporters) and the broker quota configs
// (QuotaConfigs.brokerQuotaConfigs, which DynamicConfig.Broker adds).
var dynamicOtherConfigs = []string{
	"log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.load.factor",
	"log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
	"num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir", "background.threads",
	"metric.reporters",
	"max.connections.per.ip", "max.connections.per.ip.overrides",
	"producer.id.expiration.ms", "transaction.partition.verification.enable",
	"remote.log.index.file.cache.total.size.bytes", "remote.fetch.max.wait.ms",
	"remote.log.manager.copy.max.bytes.per.second", "remote.log.manager.fetch.max.bytes.per.second",
	"leader.replication.throttled.rate", "follower.replication.throttled.rate",
	"replica.alter.log.dirs.io.max.bytes.per.second",
}

// clusterLevelListenerConfigs may be set cluster-wide although they are
// listener configs (DynamicBrokerConfig.ClusterLevelListenerConfigs).
var clusterLevelListenerConfigs = setOf("max.connections", "max.connection.creation.rate", "num.network.threads")

var (
	dynamicKeys   = setOf(append(append(append(append([]string{}, dynamicLogConfigs...), dynamicSecurityConfigs...), dynamicListenerConfigs...), dynamicOtherConfigs...)...)
	securityKeys  = setOf(dynamicSecurityConfigs...)
	perBrokerKeys = func() map[string]bool {
		m := setOf(append(append([]string{}, dynamicSecurityConfigs...), dynamicListenerConfigs...)...)
		for k := range clusterLevelListenerConfigs {
			delete(m, k)
		}
		return m
	}()
	// passwordKeys are the dynamic configs of type PASSWORD: stored
	// encrypted with password.encoder.secret in Kafka.
	passwordKeys = []string{"ssl.keystore.password", "ssl.key.password", "ssl.truststore.password", "ssl.keystore.key", "sasl.jaas.config"}
)

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// listenerBase strips listener.name.<l>. from a key.
func listenerBase(key string) (base string, ok bool) {
	rest, ok := strings.CutPrefix(key, listenerPrefix)
	if !ok {
		return "", false
	}
	_, base, ok = strings.Cut(rest, ".")
	return base, ok && base != ""
}

// IsDynamicBrokerConfig reports whether key may change at runtime
// (DynamicBrokerConfig.AllDynamicConfigs, and listener-prefixed forms of
// them): DescribeConfigs reports the others read-only.
func IsDynamicBrokerConfig(key string) bool {
	if base, ok := listenerBase(key); ok {
		return dynamicKeys[base] || strings.HasSuffix(base, ".sasl.jaas.config")
	}
	return dynamicKeys[key]
}

// IsPasswordConfig is DynamicBrokerConfig.isPasswordConfig: a dynamic
// password config, listener-prefixed or not.
func IsPasswordConfig(key string) bool {
	for _, p := range passwordKeys {
		if strings.HasSuffix(key, p) {
			return true
		}
	}
	return false
}

// nonDynamic is DynamicConfig.Broker.nonDynamicProps for the keys given:
// configs the broker knows that may not change at runtime. Unknown keys
// are custom configs, which Kafka accepts (customPropsAllowed).
func nonDynamic(key string) bool {
	if IsDynamicBrokerConfig(key) {
		return false
	}
	_, known := brokerDefIndex[key]
	return known || kafkaOnlyConfigs[key]
}

// kafkaOnlyConfigs are Kafka broker configs that kbroker does not read but
// that must still be refused dynamically, as Kafka refuses them: the
// common ones an operator might try.
var kafkaOnlyConfigs = setOf(
	"log.retention.hours", "log.retention.minutes", "log.roll.hours", "log.roll.jitter.hours",
	"log.message.format.version", "log.cleaner.enable", "num.partitions", "default.replication.factor",
	"auto.create.topics.enable", "zookeeper.connect", "broker.id", "log.dirs", "log.dir",
	"offsets.topic.replication.factor", "inter.broker.protocol.version", "controlled.shutdown.enable",
	"password.encoder.secret", "authorizer.class.name", "super.users",
)

// DynamicConfigError is Kafka's ConfigException from validating dynamic
// broker configs; ZkAdminManager answers it as INVALID_REQUEST with
// "Invalid config value for resource <resource>: " before the text.
type DynamicConfigError struct{ Msg string }

func (e *DynamicConfigError) Error() string { return e.Msg }

// scalaSet formats names as Scala's Set.toString does in Kafka's messages;
// sorted, so that the text does not depend on map order.
func scalaSet(names []string) string {
	sort.Strings(names)
	return "Set(" + strings.Join(names, ", ") + ")"
}

// ValidateDynamicBrokerConfigs is DynamicBrokerConfig.validateConfigs
// followed by the type and value checks of the resulting configuration:
// props are the whole dynamic config set of one entity (a broker, or the
// cluster default when perBroker is false).
func (c *Config) ValidateDynamicBrokerConfigs(props map[string]string, perBroker bool) error {
	if err := CheckDynamicBrokerConfigs(props, perBroker); err != nil {
		return err
	}
	def, brk := c.dynDefault, c.dynBroker
	if perBroker {
		brk = props
	} else {
		def = props
	}
	next, err := c.Reconfigured(def, brk)
	if err != nil {
		return err
	}
	return validateThreadCounts(c, next)
}

// CheckDynamicBrokerConfigs is DynamicBrokerConfig.validateConfigs: names
// that may change dynamically at this level, and values of their types.
func CheckDynamicBrokerConfigs(props map[string]string, perBroker bool) error {
	check := func(pred func(string) bool, msg string) error {
		var bad []string
		for k := range props {
			if pred(k) {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			return &DynamicConfigError{msg + ": " + scalaSet(bad)}
		}
		return nil
	}
	if err := check(nonDynamic, "Cannot update these configs dynamically"); err != nil {
		return err
	}
	if err := check(func(k string) bool { return securityKeys[k] }, "These security configs can be dynamically updated only per-listener using the listener prefix"); err != nil {
		// Kafka filters a mutable Scala set here, which prints as HashSet.
		err.(*DynamicConfigError).Msg = strings.Replace(err.Error(), ": Set(", ": HashSet(", 1)
		return err
	}
	if err := validateDynamicTypes(props); err != nil {
		return err
	}
	if !perBroker {
		if err := check(isPerBrokerConfig, "Cannot update these configs at default cluster level, broker id must be specified"); err != nil {
			return err
		}
	}
	return nil
}

// IsDynamicLogConfig reports a broker key that is the default of a topic
// config (DynamicLogConfig.ReconfigurableConfigs).
func IsDynamicLogConfig(key string) bool { return dynamicLogSet[key] }

// IsConnectionLimitConfig reports a key the connection quotas read
// (SocketServer.ReconfigurableConfigs).
func IsConnectionLimitConfig(key string) bool {
	switch key {
	case "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "max.connection.creation.rate":
		return true
	}
	return false
}

var dynamicLogSet = setOf(dynamicLogConfigs...)

func isPerBrokerConfig(k string) bool {
	if base, ok := listenerBase(k); ok {
		return !clusterLevelListenerConfigs[base]
	}
	return perBrokerKeys[k]
}

// validateDynamicTypes checks each value as its key's type requires
// (DynamicConfig.Broker.validate parses them), listener prefixes removed.
func validateDynamicTypes(props map[string]string) error {
	err := checkDynamicTypes(props)
	var ve *ValueError
	if errors.As(err, &ve) && ve.Reason != "" {
		// Kafka's ConfigDef texts begin with a capital ("Not a number of
		// type INT"); kafka-configs prints them.
		ve.Reason = strings.ToUpper(ve.Reason[:1]) + ve.Reason[1:]
	}
	return err
}

func checkDynamicTypes(props map[string]string) error {
	for _, k := range sortedKeys(props) {
		base := k
		if b, ok := listenerBase(k); ok {
			base = b
		}
		if d, ok := topicDefByBrokerKey(base); ok {
			if err := validate(d.Type, d.rule, strings.TrimSpace(props[k])); err != nil {
				return &ValueError{Key: base, Value: props[k], Reason: err.Error()}
			}
			continue
		}
		if t, ok := dynamicOnlyTypes[base]; ok {
			if err := parseTyped(t, strings.TrimSpace(props[k])); err != nil {
				return &ValueError{Key: base, Value: props[k], Reason: err.Error()}
			}
			if nonNegativeDynamic[base] && strings.HasPrefix(strings.TrimSpace(props[k]), "-") {
				return &ValueError{Key: base, Value: props[k], Reason: "Value must be at least 0"}
			}
			continue
		}
		i, ok := brokerDefIndex[base]
		if !ok {
			continue
		}
		d := brokerDefs[i]
		if props[k] == "" && d.nullable {
			continue
		}
		var scratch Config
		scratch.values = map[string]string{}
		if err := d.apply(&scratch, props[k]); err != nil {
			return &ValueError{Key: base, Value: props[k], Reason: err.Error()}
		}
	}
	return nil
}

// topicDefByBrokerKey finds the topic config whose broker default key is
// key: its rules check the dynamic broker value as they check the topic's.
func topicDefByBrokerKey(key string) (TopicConfigDef, bool) {
	for _, d := range topicConfigDefs {
		if d.BrokerConfig == key {
			return d, true
		}
	}
	return TopicConfigDef{}, false
}

// dynamicOnlyTypes types the dynamic configs that kbroker accepts without
// a server.properties definition of its own.
var dynamicOnlyTypes = map[string]kmsg.ConfigType{
	"log.cleaner.threads": tInt, "log.cleaner.dedupe.buffer.size": tLong, "log.cleaner.io.buffer.load.factor": tDouble,
	"log.cleaner.io.buffer.size": tInt, "log.cleaner.io.max.bytes.per.second": tDouble, "log.cleaner.backoff.ms": tLong,
	"background.threads": tInt, "metric.reporters": tList, "log.flush.interval.messages": tLong,
	"log.cleaner.max.compaction.lag.ms": tLong, "compression.lz4.level": tInt,
	"log.message.timestamp.difference.max.ms": tLong, "log.message.timestamp.before.max.ms": tLong,
	"log.message.timestamp.after.max.ms": tLong, "log.message.downconversion.enable": tBool,
	"remote.log.index.file.cache.total.size.bytes": tLong, "remote.fetch.max.wait.ms": tInt,
	"remote.log.manager.copy.max.bytes.per.second": tLong, "remote.log.manager.fetch.max.bytes.per.second": tLong,
	"leader.replication.throttled.rate": tLong, "follower.replication.throttled.rate": tLong,
	"replica.alter.log.dirs.io.max.bytes.per.second": tLong, "max.connection.creation.rate": tInt,
}

// nonNegativeDynamic are the broker quota rates (QuotaConfigs: atLeast(0)).
var nonNegativeDynamic = setOf("leader.replication.throttled.rate", "follower.replication.throttled.rate", "replica.alter.log.dirs.io.max.bytes.per.second")

// validateThreadCounts is DynamicThreadPool.validateReconfiguration: a
// thread count may change by at most a factor of two at a time.
func validateThreadCounts(cur, next *Config) error {
	for _, k := range []string{"num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir", "background.threads"} {
		oldV, newV := cur.intValue(k), next.intValue(k)
		if oldV == newV {
			continue
		}
		msg := fmt.Sprintf("Dynamic thread count update validation failed for %s=%d", k, newV)
		switch {
		case newV <= 0:
			msg += ", value should be at least 1"
		case newV < oldV/2:
			msg += fmt.Sprintf(", value should be at least half the current value %d", oldV)
		case newV > oldV*2:
			msg += fmt.Sprintf(", value should not be greater than double the current value %d", oldV)
		default:
			continue
		}
		// Kafka's processReconfiguration wraps the reconfigurable's
		// exception as ConfigException(name, value), which reads oddly
		// but is what kafka-configs prints.
		return &DynamicConfigError{"Invalid value org.apache.kafka.common.config.ConfigException: " + msg + " for configuration Invalid dynamic configuration"}
	}
	return nil
}

// intValue reads an integer config by name, whether or not kbroker has a
// field for it ("background.threads" is Kafka's 10).
func (c *Config) intValue(key string) int64 {
	v, ok := c.values[key]
	if !ok {
		v = c.static[key]
	}
	if v == "" && key == "background.threads" {
		v = "10"
	}
	var n int64
	fmt.Sscan(v, &n)
	return n
}

// brokerConfigSynonyms is DynamicBrokerConfig.brokerConfigSynonyms without
// listener overrides: the keys that set the same thing, in precedence
// order.
func brokerConfigSynonyms(name string) []string {
	for _, group := range [][]string{
		{"log.roll.ms", "log.roll.hours"},
		{"log.roll.jitter.ms", "log.roll.jitter.hours"},
		{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
		{"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	} {
		for _, k := range group {
			if k == name {
				return group
			}
		}
	}
	return []string{name}
}

// Reconfigured is this broker's configuration with the dynamic layers on
// top of its static one (DynamicBrokerConfig.updateCurrentConfig): the
// static keys, then the cluster defaults, then the broker's own, each
// override removing the synonyms it outranks. c itself is unchanged.
func (c *Config) Reconfigured(clusterDefault, perBroker map[string]string) (*Config, error) {
	merged := make(map[string]string, len(c.static)+len(clusterDefault)+len(perBroker))
	for k, v := range c.static {
		merged[k] = v
	}
	for _, layer := range []map[string]string{clusterDefault, perBroker} {
		for _, k := range sortedKeys(layer) {
			for _, s := range brokerConfigSynonyms(k) {
				delete(merged, s)
			}
			merged[k] = layer[k]
		}
	}
	next, _, err := FromMap(merged)
	if err != nil {
		return nil, err
	}
	next.static = c.static
	next.set = c.set
	next.dynDefault = copyMap(clusterDefault)
	next.dynBroker = copyMap(perBroker)
	return next, nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// DynamicBrokerConfigs and DynamicDefaultConfigs are the dynamic layers c
// was built with (DescribeConfigs lists them).
func (c *Config) DynamicBrokerConfigs() map[string]string  { return copyMap(c.dynBroker) }
func (c *Config) DynamicDefaultConfigs() map[string]string { return copyMap(c.dynDefault) }

// StaticValue is what server.properties (or an override) gave key.
func (c *Config) StaticValue(key string) (string, bool) {
	v, ok := c.static[key]
	return v, ok && c.set[key]
}

// Source is where key's value comes from: the broker's dynamic configs,
// the cluster's dynamic defaults, server.properties or Kafka's default.
func (c *Config) Source(key string) kmsg.ConfigSource {
	switch {
	case hasKey(c.dynBroker, key):
		return kmsg.ConfigSourceDynamicBrokerConfig
	case hasKey(c.dynDefault, key):
		return kmsg.ConfigSourceDynamicDefaultBrokerConfig
	case c.set[key]:
		return kmsg.ConfigSourceStaticBrokerConfig
	}
	return kmsg.ConfigSourceDefaultConfig
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// ConfigSynonyms lists every layer that sets key or a synonym of it,
// highest precedence first (ConfigHelper.configSynonyms): name, value and
// source. defaults holds Kafka's default values by key.
func (c *Config) ConfigSynonyms(key string, defaults map[string]string) []ConfigSynonym {
	out := c.allSynonyms(key, defaults)
	// Kafka drops the synonyms ranked above the key itself: describing
	// log.roll.hours does not list log.roll.ms.
	for i, s := range out {
		if s.Name == key {
			return out[i:]
		}
	}
	return nil
}

// TopicDefaultSynonyms lists the broker layers that set a topic config's
// default: key is its first broker synonym, and every key of its group is
// listed by layer.
func (c *Config) TopicDefaultSynonyms(key string, defaults map[string]string) []ConfigSynonym {
	return c.allSynonyms(key, defaults)
}

func (c *Config) allSynonyms(key string, defaults map[string]string) []ConfigSynonym {
	names := brokerConfigSynonyms(key)
	var out []ConfigSynonym
	add := func(m map[string]string, src kmsg.ConfigSource, only func(string) bool) {
		for _, n := range names {
			if v, ok := m[n]; ok && (only == nil || only(n)) {
				out = append(out, ConfigSynonym{Name: n, Value: v, Source: src})
			}
		}
	}
	add(c.dynBroker, kmsg.ConfigSourceDynamicBrokerConfig, nil)
	add(c.dynDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig, nil)
	add(c.static, kmsg.ConfigSourceStaticBrokerConfig, func(n string) bool { return c.set[n] })
	add(defaults, kmsg.ConfigSourceDefaultConfig, nil)
	return out
}

// ConfigSynonym is one source of a config's value.
type ConfigSynonym struct {
	Name, Value string
	Source      kmsg.ConfigSource
}

// BrokerConfigType is a broker key's type and Kafka's default value as
// text, for APPEND and SUBTRACT on list configs; ok is false for keys
// kbroker does not know.
func BrokerConfigType(key string) (typ kmsg.ConfigType, def string, ok bool) {
	if base, isListener := listenerBase(key); isListener {
		key = base
	}
	if i, known := brokerDefIndex[key]; known {
		return brokerDefs[i].typ, brokerDefs[i].def, true
	}
	if t, known := dynamicOnlyTypes[key]; known {
		return t, "", true
	}
	return 0, "", false
}
