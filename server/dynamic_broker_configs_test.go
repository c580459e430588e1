package server

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The layers of a broker config and where DescribeConfigs says each value
// comes from: DYNAMIC_BROKER_CONFIG over DYNAMIC_DEFAULT_BROKER_CONFIG
// over STATIC_BROKER_CONFIG over DEFAULT_CONFIG.
func TestDynamicBrokerConfigSources(t *testing.T) {
	ab := startAdminBroker(t, "message.max.bytes=2000000")
	set := kmsg.IncrementalAlterConfigOpSet
	del := kmsg.IncrementalAlterConfigOpDelete
	source := func(name string) (string, kmsg.ConfigSource, []kmsg.ConfigSource) {
		t.Helper()
		c, ok := configsByName(describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, "0", name))[name]
		if !ok {
			t.Fatalf("%s not described", name)
		}
		var syn []kmsg.ConfigSource
		for _, s := range c.ConfigSynonyms {
			syn = append(syn, s.Source)
		}
		return strOrNull(c.Value), c.Source, syn
	}
	if v, src, _ := source("message.max.bytes"); v != "2000000" || src != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("static: %s %v", v, src)
	}
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "", configOp{set, "message.max.bytes", strp("3000000")}); r.ErrorCode != 0 {
		t.Fatalf("default: %s %v", errName(r.ErrorCode), strOrNull(r.ErrorMessage))
	}
	if v, src, syn := source("message.max.bytes"); v != "3000000" || src != kmsg.ConfigSourceDynamicDefaultBrokerConfig ||
		len(syn) != 3 || syn[1] != kmsg.ConfigSourceStaticBrokerConfig || syn[2] != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("dynamic default: %s %v %v", v, src, syn)
	}
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "0", configOp{set, "message.max.bytes", strp("4000000")}); r.ErrorCode != 0 {
		t.Fatalf("per broker: %s %v", errName(r.ErrorCode), strOrNull(r.ErrorMessage))
	}
	if v, src, syn := source("message.max.bytes"); v != "4000000" || src != kmsg.ConfigSourceDynamicBrokerConfig || len(syn) != 4 {
		t.Fatalf("dynamic broker: %s %v %v", v, src, syn)
	}
	// The default resource lists only the cluster-wide layer.
	def := configsByName(describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, ""))
	if c, ok := def["message.max.bytes"]; !ok || strOrNull(c.Value) != "3000000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig || len(def) != 1 {
		t.Fatalf("default resource: %v", def)
	}
	// Topics without an override take the broker value in force.
	ab.createTopic(t, "dyn", 1, nil)
	if c := configsByName(describeConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "dyn", "max.message.bytes"))["max.message.bytes"]; strOrNull(c.Value) != "4000000" || c.Source != kmsg.ConfigSourceDynamicBrokerConfig {
		t.Fatalf("topic default: %v %v", strOrNull(c.Value), c.Source)
	}
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "0", configOp{del, "message.max.bytes", nil}); r.ErrorCode != 0 {
		t.Fatalf("delete: %s", errName(r.ErrorCode))
	}
	if v, src, _ := source("message.max.bytes"); v != "3000000" || src != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
		t.Fatalf("after delete: %s %v", v, src)
	}
	if c := configsByName(describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, "0", "log.segment.bytes", "broker.id")); c["log.segment.bytes"].ReadOnly || !c["broker.id"].ReadOnly {
		t.Fatalf("read-only flags: %+v", c)
	}
}

// A dynamic log default reaches the logs already open.
func TestDynamicLogDefaultReachesOpenLogs(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "seg", 2, nil)
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "", configOp{kmsg.IncrementalAlterConfigOpSet, "log.segment.bytes", strp("1048576")}); r.ErrorCode != 0 {
		t.Fatalf("%s %v", errName(r.ErrorCode), strOrNull(r.ErrorMessage))
	}
	for _, p := range ab.b.topic("seg").Partitions {
		if got := p.Log().Config().SegmentBytes; got != 1048576 {
			t.Fatalf("segment.bytes in force %d", got)
		}
	}
}

// Kafka's refusals, with its messages (DynamicBrokerConfig.validateConfigs).
func TestDynamicBrokerConfigRefusals(t *testing.T) {
	ab := startAdminBroker(t)
	set := kmsg.IncrementalAlterConfigOpSet
	for _, c := range []struct {
		name string
		op   configOp
		code *kerr.Error
		msg  string
	}{
		{"0", configOp{set, "log.retention.hours", strp("1")}, kerr.InvalidRequest, "Cannot update these configs dynamically: Set(log.retention.hours)"},
		{"", configOp{set, "message.max.bytes", strp("big")}, kerr.InvalidRequest, "Invalid value big for configuration message.max.bytes: Not a number of type INT"},
		{"", configOp{set, "leader.replication.throttled.rate", strp("-5")}, kerr.InvalidRequest, "Value must be at least 0"},
		{"0", configOp{set, "ssl.keystore.location", strp("/x")}, kerr.InvalidRequest, "These security configs can be dynamically updated only per-listener using the listener prefix: HashSet(ssl.keystore.location)"},
		{"", configOp{set, "listeners", strp("PLAINTEXT://:1")}, kerr.InvalidRequest, "Cannot update these configs at default cluster level, broker id must be specified: Set(listeners)"},
		{"0", configOp{set, "num.io.threads", strp("100")}, kerr.InvalidRequest, "Invalid value org.apache.kafka.common.config.ConfigException: Dynamic thread count update validation failed for num.io.threads=100, value should not be greater than double the current value 8 for configuration Invalid dynamic configuration"},
		{"0", configOp{set, "listener.name.plaintext.ssl.key.password", strp("x")}, kerr.InvalidConfig, "Invalid config value for resource ConfigResource(type=BROKER, name='0'): Password encoder secret not configured"},
		{"0", configOp{kmsg.IncrementalAlterConfigOpAppend, "message.max.bytes", strp("1")}, kerr.InvalidConfig, "Config value append is not allowed for config key: message.max.bytes"},
		{"7", configOp{set, "message.max.bytes", strp("1")}, kerr.InvalidRequest, "Unexpected broker id, expected 0, but received 7"},
	} {
		r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, c.name, c.op)
		if r.ErrorCode != c.code.Code || !strings.HasPrefix(strOrNull(r.ErrorMessage), c.msg) && !strings.HasSuffix(strOrNull(r.ErrorMessage), c.msg) {
			t.Errorf("%s %s: %s %q, want %s %q", c.name, c.op.name, errName(r.ErrorCode), strOrNull(r.ErrorMessage), c.code.Message, c.msg)
		}
	}
	// A custom key is accepted (customPropsAllowed), and nothing refused
	// was stored.
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "", configOp{set, "my.plugin.setting", strp("on")}); r.ErrorCode != 0 {
		t.Fatalf("custom: %s %v", errName(r.ErrorCode), strOrNull(r.ErrorMessage))
	}
	if def := ab.b.current().DynamicDefaultConfigs(); len(def) != 1 || def["my.plugin.setting"] != "on" {
		t.Fatalf("stored defaults %v", def)
	}
	// Kafka knows no type for it, so it may be a secret: never shown.
	if c := configsByName(describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, ""))["my.plugin.setting"]; !c.IsSensitive || c.Value != nil {
		t.Fatalf("custom config described as %+v", c)
	}
}
