package config

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestValidateTopicConfigs(t *testing.T) {
	tests := []struct {
		configs map[string]string
		errKey  string // "" = valid
	}{
		{map[string]string{}, ""},
		{map[string]string{"cleanup.policy": "compact,delete", "retention.ms": "-1", "min.insync.replicas": "2"}, ""},
		{map[string]string{"cleanup.policy": "compact"}, ""},
		{map[string]string{"cleanup.policy": "shred"}, "cleanup.policy"},
		{map[string]string{"retention.ms": "-2"}, "retention.ms"},
		{map[string]string{"retention.ms": "x"}, "retention.ms"},
		{map[string]string{"min.insync.replicas": "0"}, "min.insync.replicas"},
		{map[string]string{"segment.bytes": "3000000000"}, "segment.bytes"},
		{map[string]string{"segment.bytes": "13"}, "segment.bytes"},
		{map[string]string{"message.timestamp.type": "LogAppendTime"}, ""},
		{map[string]string{"message.timestamp.type": "Now"}, "message.timestamp.type"},
		{map[string]string{"compression.type": "zstd", "compression.zstd.level": "19"}, ""},
		{map[string]string{"compression.type": "brotli"}, "compression.type"},
		{map[string]string{"compression.gzip.level": "0"}, "compression.gzip.level"},
		{map[string]string{"min.cleanable.dirty.ratio": "0.2"}, ""},
		{map[string]string{"min.cleanable.dirty.ratio": "2"}, "min.cleanable.dirty.ratio"},
		{map[string]string{"preallocate": "TRUE"}, ""},
		{map[string]string{"unclean.leader.election.enable": "maybe"}, "unclean.leader.election.enable"},
		{map[string]string{"leader.replication.throttled.replicas": "*"}, ""},
		{map[string]string{"leader.replication.throttled.replicas": "0:1,1:2"}, ""},
		{map[string]string{"leader.replication.throttled.replicas": "0-1"}, "leader.replication.throttled.replicas"},
		{map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "min.compaction.lag.ms"},
		{map[string]string{"message.downconversion.enable": "true"}, "message.downconversion.enable"},
	}
	for _, tt := range tests {
		err := ValidateTopicConfigs(tt.configs)
		if tt.errKey == "" {
			if err != nil {
				t.Errorf("%v: %v", tt.configs, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.errKey) {
			t.Errorf("%v: error %v does not name %s", tt.configs, err, tt.errKey)
		}
	}
	err := ValidateTopicConfigs(map[string]string{"retention.ms": "1", "x": "1"})
	if err == nil || err.Error() != "Unknown topic config name: x" {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestTopicConfigTable(t *testing.T) {
	c, _ := mustLoad(t, "")
	for _, d := range TopicConfigDefs() {
		if d.Doc == "" || d.Type == kmsg.ConfigTypeUnknown {
			t.Errorf("%s: missing doc or type", d.Name)
		}
		if d.BrokerConfig != "" {
			if _, ok := brokerDefIndex[d.BrokerConfig]; !ok {
				t.Errorf("%s: broker config %s unknown", d.Name, d.BrokerConfig)
			}
		}
		// Every default a broker hands out must pass the topic's own check.
		v, src := c.TopicDefault(d.Name)
		if err := d.Validate(v); err != nil {
			t.Errorf("%s: default %q invalid: %v", d.Name, v, err)
		}
		if src != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("%s: source %v with an empty file", d.Name, src)
		}
		if v != d.Default {
			t.Errorf("%s: broker default %q, Kafka's %q", d.Name, v, d.Default)
		}
	}
	if _, ok := LookupTopicConfig("retention.ms"); !ok {
		t.Fatal("retention.ms missing")
	}
	if _, ok := LookupTopicConfig("log.retention.ms"); ok {
		t.Fatal("broker key found as topic config")
	}
}

func TestTopicDefaultFromBroker(t *testing.T) {
	c, _ := mustLoad(t, "log.retention.hours=1\nmin.insync.replicas=2\nlog.cleanup.policy=compact, delete\n")
	tests := []struct {
		name, want string
		src        kmsg.ConfigSource
	}{
		{"retention.ms", "3600000", kmsg.ConfigSourceStaticBrokerConfig},
		{"min.insync.replicas", "2", kmsg.ConfigSourceStaticBrokerConfig},
		{"cleanup.policy", "compact,delete", kmsg.ConfigSourceStaticBrokerConfig},
		{"segment.ms", "604800000", kmsg.ConfigSourceDefaultConfig},
		{"max.message.bytes", "1048588", kmsg.ConfigSourceDefaultConfig},
		{"remote.storage.enable", "false", kmsg.ConfigSourceDefaultConfig},
		{"flush.ms", "9223372036854775807", kmsg.ConfigSourceDefaultConfig},
	}
	for _, tt := range tests {
		v, src := c.TopicDefault(tt.name)
		if v != tt.want || src != tt.src {
			t.Errorf("%s: got %q %v, want %q %v", tt.name, v, src, tt.want, tt.src)
		}
	}
	if _, src := c.TopicDefault("nope"); src != kmsg.ConfigSourceUnknown {
		t.Error("unknown topic config has a source")
	}
}

func TestTopicLogConfig(t *testing.T) {
	c, _ := mustLoad(t, "log.segment.bytes=2048\nlog.retention.bytes=100\n")
	lc := c.TopicLogConfig(map[string]string{
		"retention.ms":          "60000",
		"cleanup.policy":        "compact, delete",
		"segment.index.bytes":   "4096",
		"min.compaction.lag.ms": "7",
		"segment.ms":            "bogus", // skipped, default kept
	})
	if lc.RetentionMs != 60000 || lc.CleanupPolicy != "compact,delete" || lc.MaxIndexBytes != 4096 || lc.MinCompactionLagMs != 7 {
		t.Errorf("overrides not applied: %+v", lc)
	}
	if lc.SegmentBytes != 2048 || lc.RetentionBytes != 100 || lc.SegmentMs != 604800000 {
		t.Errorf("broker defaults not kept: %+v", lc)
	}
	if got := c.TopicLogConfig(map[string]string{"retention.ms": "-1"}).RetentionMs; got != -1 {
		t.Errorf("retention.ms=-1 -> %d", got)
	}
}

func TestBrokerConfigEntries(t *testing.T) {
	c, _ := mustLoad(t, "num.partitions=3\n")
	entries := c.BrokerConfigEntries()
	byName := map[string]BrokerConfigEntry{}
	for i, e := range entries {
		if i > 0 && entries[i-1].Name >= e.Name {
			t.Fatalf("not sorted at %s", e.Name)
		}
		byName[e.Name] = e
	}
	np := byName["num.partitions"]
	if np.Value != "3" || np.Source != kmsg.ConfigSourceStaticBrokerConfig || np.Type != kmsg.ConfigTypeInt || !np.ReadOnly {
		t.Errorf("num.partitions: %+v", np)
	}
	mmb := byName["message.max.bytes"]
	if mmb.Value != "1048588" || mmb.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("message.max.bytes: %+v", mmb)
	}
	if _, ok := byName["log.retention.ms"]; ok {
		t.Error("unset nullable key listed")
	}
	if byName["log.cleanup.policy"].Type != kmsg.ConfigTypeList {
		t.Error("log.cleanup.policy type")
	}
}
