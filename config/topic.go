package config

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicConfigDef describes one topic-level config as Kafka 3.9's LogConfig
// does (message.downconversion.enable is left out: 4.x dropped it).
type TopicConfigDef struct {
	Name string
	// BrokerConfig is the server.properties key that supplies the default
	// ("" when only Kafka's default applies). For retention.ms, segment.ms
	// and segment.jitter.ms the coarser units of that key count too.
	BrokerConfig string
	// Default is Kafka's default, used when BrokerConfig is empty.
	Default string
	Type    kmsg.ConfigType
	Doc     string
	// rule is a func(int64) error for integer types or a func(string)
	// error; nil when parsing as Type is the only check.
	rule any
}

// Validate reports whether v is a value Kafka would accept for d.
func (d TopicConfigDef) Validate(v string) error {
	if err := validate(d.Type, d.rule, strings.TrimSpace(v)); err != nil {
		return &ValueError{Key: d.Name, Value: v, Reason: err.Error()}
	}
	return nil
}

var topicConfigDefs = []TopicConfigDef{
	{"cleanup.policy", "log.cleanup.policy", "delete", tList, "delete old segments, compact by key, or both", listOf("compact", "delete")},
	{"compression.type", "compression.type", "producer", tString, "codec for stored batches; producer keeps the producer's", oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")},
	{"compression.gzip.level", "compression.gzip.level", "-1", tInt, "gzip level when compression.type=gzip", gzipLevel},
	{"compression.lz4.level", "compression.lz4.level", "9", tInt, "lz4 level when compression.type=lz4", between(1, 17)},
	{"compression.zstd.level", "compression.zstd.level", "3", tInt, "zstd level when compression.type=zstd", between(-131072, 22)},
	{"delete.retention.ms", "log.cleaner.delete.retention.ms", "86400000", tLong, "how long compaction keeps tombstones", atLeast(0)},
	{"file.delete.delay.ms", "log.segment.delete.delay.ms", "60000", tLong, "wait before deleting a file from disk", atLeast(0)},
	{"flush.messages", "log.flush.interval.messages", maxLong, tLong, "fsync after this many messages", atLeast(1)},
	{"flush.ms", "log.flush.interval.ms", maxLong, tLong, "fsync after this much time", atLeast(0)},
	{"follower.replication.throttled.replicas", "", "", tList, "replicas throttled on the follower side", throttledReplicas},
	{"index.interval.bytes", "log.index.interval.bytes", "4096", tInt, "bytes between offset index entries", atLeast(0)},
	{"leader.replication.throttled.replicas", "", "", tList, "replicas throttled on the leader side", throttledReplicas},
	{"local.retention.bytes", "log.local.retention.bytes", "-2", tLong, "local bytes kept with tiered storage; -2 = retention.bytes", atLeast(-2)},
	{"local.retention.ms", "log.local.retention.ms", "-2", tLong, "local time kept with tiered storage; -2 = retention.ms", atLeast(-2)},
	{"max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", maxLong, tLong, "longest a message stays uncompacted", atLeast(1)},
	{"max.message.bytes", "message.max.bytes", "1048588", tInt, "largest record batch accepted", atLeast(0)},
	{"message.timestamp.after.max.ms", "log.message.timestamp.after.max.ms", maxLong, tLong, "how far in the future a CreateTime may be", atLeast(0)},
	{"message.timestamp.before.max.ms", "log.message.timestamp.before.max.ms", maxLong, tLong, "how far in the past a CreateTime may be", atLeast(0)},
	{"message.timestamp.type", "log.message.timestamp.type", "CreateTime", tString, "CreateTime or LogAppendTime", oneOf("CreateTime", "LogAppendTime")},
	{"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio", "0.5", tDouble, "dirty share of the log that triggers compaction", unitRatio},
	{"min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", "0", tLong, "shortest a message stays uncompacted", atLeast(0)},
	{"min.insync.replicas", "min.insync.replicas", "1", tInt, "in-sync replicas an acks=all write needs", atLeast(1)},
	{"preallocate", "log.preallocate", "false", tBool, "preallocate segment files", nil},
	{"remote.log.copy.disable", "", "false", tBool, "stop copying segments to tiered storage", nil},
	{"remote.log.delete.on.disable", "", "false", tBool, "delete tiered data when tiered storage is disabled", nil},
	{"remote.storage.enable", "", "false", tBool, "tiered storage (not supported by kbroker)", nil},
	{"retention.bytes", "log.retention.bytes", "-1", tLong, "largest size of a partition before old segments go; -1 = no limit", nil},
	{"retention.ms", "log.retention.ms", "604800000", tLong, "longest a segment is kept; -1 = forever", atLeast(-1)},
	{"segment.bytes", "log.segment.bytes", "1073741824", tInt, "segment file size", atLeast(14)},
	{"segment.index.bytes", "log.index.size.max.bytes", "10485760", tInt, "offset index size", atLeast(4)},
	{"segment.jitter.ms", "log.roll.jitter.ms", "0", tLong, "random jitter subtracted from segment.ms", atLeast(0)},
	{"segment.ms", "log.roll.ms", "604800000", tLong, "roll a segment after this much time", atLeast(1)},
	{"unclean.leader.election.enable", "unclean.leader.election.enable", "false", tBool, "let an out-of-sync replica become leader", nil},
}

var topicConfigIndex = func() map[string]int {
	m := make(map[string]int, len(topicConfigDefs))
	for i, d := range topicConfigDefs {
		m[d.Name] = i
	}
	return m
}()

func unitRatio(v string) error {
	x, _ := strconv.ParseFloat(v, 64)
	if x < 0 || x > 1 {
		return errors.New("value must be no less than 0 and no more than 1")
	}
	return nil
}

// throttledReplicas accepts "*" or "partition:brokerId,..." as Kafka's
// ThrottledReplicaListValidator does.
func throttledReplicas(v string) error {
	entries := parseList(v)
	if len(entries) == 1 && entries[0] == "*" {
		return nil
	}
	for _, e := range entries {
		p, b, ok := strings.Cut(e, ":")
		_, perr := strconv.ParseInt(p, 10, 32)
		_, berr := strconv.ParseInt(b, 10, 32)
		if !ok || perr != nil || berr != nil {
			return errors.New("must be the literal * or a list of replicas in the format partitionId:brokerId[,partitionId:brokerId]")
		}
	}
	return nil
}

// TopicConfigDefs returns the topic configs sorted by name.
func TopicConfigDefs() []TopicConfigDef {
	return append([]TopicConfigDef(nil), topicConfigDefs...)
}

// LookupTopicConfig finds a topic config by name.
func LookupTopicConfig(name string) (TopicConfigDef, bool) {
	i, ok := topicConfigIndex[name]
	if !ok {
		return TopicConfigDef{}, false
	}
	return topicConfigDefs[i], true
}

// ValidateTopicConfigs checks CreateTopics/AlterConfigs values the way
// Kafka's LogConfig.validate does. The error names the first bad key in
// name order, so the same request always gets the same message.
func ValidateTopicConfigs(configs map[string]string) error {
	keys := sortedKeys(configs)
	for _, k := range keys {
		if _, ok := topicConfigIndex[k]; !ok {
			return &UnknownTopicConfigError{Name: k}
		}
	}
	for _, k := range keys {
		d := topicConfigDefs[topicConfigIndex[k]]
		if err := d.Validate(configs[k]); err != nil {
			return err
		}
	}
	minLag, hasMin := configs["min.compaction.lag.ms"]
	maxLag, hasMax := configs["max.compaction.lag.ms"]
	if hasMin && hasMax {
		lo, _ := strconv.ParseInt(strings.TrimSpace(minLag), 10, 64)
		hi, _ := strconv.ParseInt(strings.TrimSpace(maxLag), 10, 64)
		if lo > hi {
			return &ValueError{Key: "min.compaction.lag.ms", Value: minLag, Reason: "must be no more than max.compaction.lag.ms " + maxLag}
		}
	}
	return nil
}

// ValidateTopicConfigs is the package function of that name, for callers
// that hold a *Config; the broker's settings do not change what is valid.
func (c *Config) ValidateTopicConfigs(configs map[string]string) error {
	return ValidateTopicConfigs(configs)
}

// UnknownTopicConfigError is Kafka's InvalidConfigurationException for a
// name LogConfig does not know; the text is Kafka's, clients show it.
type UnknownTopicConfigError struct{ Name string }

func (e *UnknownTopicConfigError) Error() string { return "Unknown topic config name: " + e.Name }

// topicUnits lists, for the topic configs whose broker default comes in
// several units, every broker key in precedence order.
var topicUnits = map[string][]string{
	"retention.ms":      {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
	"segment.ms":        {"log.roll.ms", "log.roll.hours"},
	"segment.jitter.ms": {"log.roll.jitter.ms", "log.roll.jitter.hours"},
	"flush.ms":          {"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
}

// TopicDefault is the value a topic without an override gets for name, and
// where it comes from: STATIC_BROKER_CONFIG when server.properties (or an
// override) set the broker key, DYNAMIC_DEFAULT_BROKER_CONFIG or
// DYNAMIC_BROKER_CONFIG when a dynamic layer did, DEFAULT_CONFIG otherwise. Unknown names
// give "" and UNKNOWN.
func (c *Config) TopicDefault(name string) (string, kmsg.ConfigSource) {
	d, ok := LookupTopicConfig(name)
	if !ok {
		return "", kmsg.ConfigSourceUnknown
	}
	if d.BrokerConfig == "" {
		return d.Default, kmsg.ConfigSourceDefaultConfig
	}
	source := kmsg.ConfigSourceDefaultConfig
	keys := topicUnits[name]
	if keys == nil {
		keys = []string{d.BrokerConfig}
	}
	// The highest layer that sets any of the keys is the source.
	for _, k := range keys {
		if s := c.Source(k); sourceRank(s) > sourceRank(source) {
			source = s
		}
	}
	switch name {
	case "retention.ms":
		return strconv.FormatInt(Millis(c.LogRetention), 10), source
	case "segment.ms":
		return strconv.FormatInt(Millis(c.LogRoll), 10), source
	case "segment.jitter.ms":
		return strconv.FormatInt(Millis(c.LogRollJitter), 10), source
	case "flush.ms":
		return strconv.FormatInt(Millis(c.LogFlushInterval), 10), source
	case "cleanup.policy":
		return strings.Join(c.LogCleanupPolicy, ","), source
	}
	return c.values[d.BrokerConfig], source
}

// TopicConfigNames lists the topic config names in order (DescribeConfigs
// with no names asks for all of them).
func TopicConfigNames() []string {
	names := make([]string, len(topicConfigDefs))
	for i, d := range topicConfigDefs {
		names[i] = d.Name
	}
	sort.Strings(names)
	return names
}

// sourceRank orders the layers a broker value can come from.
func sourceRank(s kmsg.ConfigSource) int {
	switch s {
	case kmsg.ConfigSourceDynamicBrokerConfig:
		return 3
	case kmsg.ConfigSourceDynamicDefaultBrokerConfig:
		return 2
	case kmsg.ConfigSourceStaticBrokerConfig:
		return 1
	}
	return 0
}
