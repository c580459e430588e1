package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeConfigs(t *testing.T, ab *adminBroker, typ kmsg.ConfigResourceType, name string, names ...string) kmsg.DescribeConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	req.IncludeDocumentation = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	r.ConfigNames = names
	req.Resources = append(req.Resources, r)
	resp := request[*kmsg.DescribeConfigsResponse](t, ab.cl, req)
	if len(resp.Resources) != 1 {
		t.Fatalf("%d resources", len(resp.Resources))
	}
	return resp.Resources[0]
}

func configsByName(r kmsg.DescribeConfigsResponseResource) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	m := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range r.Configs {
		m[c.Name] = c
	}
	return m
}

type synonym struct {
	name, value string
	source      kmsg.ConfigSource
}

func synonymsOf(c kmsg.DescribeConfigsResponseResourceConfig) []synonym {
	var out []synonym
	for _, s := range c.ConfigSynonyms {
		v := "<null>"
		if s.Value != nil {
			v = *s.Value
		}
		out = append(out, synonym{s.Name, v, s.Source})
	}
	return out
}

func TestDescribeTopicConfigsSourcesAndSynonyms(t *testing.T) {
	ab := startAdminBroker(t, "log.retention.hours=100", "log.segment.bytes=2000000")
	ab.createTopic(t, "cfg", 1, map[string]*string{"max.message.bytes": strp("5000"), "retention.ms": strp("60000")})

	res := describeConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "cfg")
	if res.ErrorCode != 0 {
		t.Fatalf("%s %v", errName(res.ErrorCode), res.ErrorMessage)
	}
	got := configsByName(res)
	check := func(name, value string, src kmsg.ConfigSource, typ kmsg.ConfigType, syns ...synonym) {
		t.Helper()
		c, ok := got[name]
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if c.Value == nil || *c.Value != value || c.Source != src || c.ConfigType != typ || c.ReadOnly || c.IsSensitive {
			t.Errorf("%s = %v source %v type %v ro %v, want %s %v %v", name, strOrNull(c.Value), c.Source, c.ConfigType, c.ReadOnly, value, src, typ)
		}
		if c.Documentation == nil || *c.Documentation == "" {
			t.Errorf("%s has no documentation", name)
		}
		gotSyns := synonymsOf(c)
		if len(gotSyns) != len(syns) {
			t.Errorf("%s synonyms %v, want %v", name, gotSyns, syns)
			return
		}
		for i := range syns {
			if gotSyns[i] != syns[i] {
				t.Errorf("%s synonyms %v, want %v", name, gotSyns, syns)
			}
		}
	}
	check("retention.ms", "60000", kmsg.ConfigSourceDynamicTopicConfig, kmsg.ConfigTypeLong,
		synonym{"retention.ms", "60000", kmsg.ConfigSourceDynamicTopicConfig},
		synonym{"log.retention.hours", "100", kmsg.ConfigSourceStaticBrokerConfig},
		synonym{"log.retention.hours", "168", kmsg.ConfigSourceDefaultConfig})
	check("max.message.bytes", "5000", kmsg.ConfigSourceDynamicTopicConfig, kmsg.ConfigTypeInt,
		synonym{"max.message.bytes", "5000", kmsg.ConfigSourceDynamicTopicConfig},
		synonym{"message.max.bytes", "1048588", kmsg.ConfigSourceDefaultConfig})
	check("segment.bytes", "2000000", kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigTypeInt,
		synonym{"log.segment.bytes", "2000000", kmsg.ConfigSourceStaticBrokerConfig},
		synonym{"log.segment.bytes", "1073741824", kmsg.ConfigSourceDefaultConfig})
	check("cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig, kmsg.ConfigTypeList,
		synonym{"log.cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig})

	only := describeConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "cfg", "retention.ms", "no.such.config")
	if len(only.Configs) != 1 || only.Configs[0].Name != "retention.ms" {
		t.Fatalf("named configs: %+v", only.Configs)
	}

	// Without the v1+ flags, synonyms and documentation stay empty.
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "cfg"
	req.Resources = append(req.Resources, r)
	plain := request[*kmsg.DescribeConfigsResponse](t, ab.cl, req).Resources[0]
	for _, c := range plain.Configs {
		if len(c.ConfigSynonyms) != 0 || c.Documentation != nil {
			t.Fatalf("%s: synonyms or documentation not asked for", c.Name)
		}
	}

	// kadm, as used by tools, sees the same thing.
	rcs, err := ab.adm.DescribeTopicConfigs(testCtx(t), "cfg")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("cfg", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("%v %v", err, rc.Err)
	}
	var seen bool
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" && c.MaybeValue() == "60000" && c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			seen = true
		}
	}
	if !seen {
		t.Fatal("kadm did not see retention.ms=60000 as a dynamic topic config")
	}
}

func TestDescribeConfigsErrorsAndBroker(t *testing.T) {
	ab := startAdminBroker(t, "num.partitions=2")

	if r := describeConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "missing"); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("missing topic: %s", errName(r.ErrorCode))
	}
	if r := describeConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "bad name"); r.ErrorCode != kerr.InvalidTopicException.Code {
		t.Fatalf("bad topic name: %s", errName(r.ErrorCode))
	}
	for _, name := range []string{"7", "zero"} {
		if r := describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, name); r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil {
			t.Fatalf("broker %q: %s", name, errName(r.ErrorCode))
		}
	}
	if r := describeConfigs(t, ab, kmsg.ConfigResourceTypeBrokerLogger, "0"); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("broker logger: %s", errName(r.ErrorCode))
	}
	if r := describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, ""); r.ErrorCode != 0 || len(r.Configs) != 0 {
		t.Fatalf("cluster default: %s, %d configs", errName(r.ErrorCode), len(r.Configs))
	}

	res := describeConfigs(t, ab, kmsg.ConfigResourceTypeBroker, "0")
	if res.ErrorCode != 0 {
		t.Fatalf("broker 0: %s", errName(res.ErrorCode))
	}
	got := configsByName(res)
	np := got["num.partitions"]
	if np.Value == nil || *np.Value != "2" || np.Source != kmsg.ConfigSourceStaticBrokerConfig || !np.ReadOnly || np.ConfigType != kmsg.ConfigTypeInt {
		t.Fatalf("num.partitions %+v", np)
	}
	if s := synonymsOf(np); len(s) != 2 || s[0] != (synonym{"num.partitions", "2", kmsg.ConfigSourceStaticBrokerConfig}) || s[1] != (synonym{"num.partitions", "1", kmsg.ConfigSourceDefaultConfig}) {
		t.Fatalf("num.partitions synonyms %v", s)
	}
	if mb := got["message.max.bytes"]; mb.Value == nil || *mb.Value != "1048588" || mb.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("message.max.bytes %+v", mb)
	}
}

func strOrNull(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}
