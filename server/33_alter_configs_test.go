package server

import (
	"maps"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func alterConfigs(t *testing.T, ab *adminBroker, typ kmsg.ConfigResourceType, name string, validateOnly bool, kv ...string) kmsg.AlterConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for i := 0; i+1 < len(kv); i += 2 {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kv[i], strp(kv[i+1])
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return request[*kmsg.AlterConfigsResponse](t, ab.cl, req).Resources[0]
}

func TestAlterConfigsReplacesOverrides(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "alt", 2, map[string]*string{"retention.ms": strp("1000"), "cleanup.policy": strp("compact")})

	if r := alterConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "alt", false, "segment.bytes", "1048576", "retention.bytes", "4096"); r.ErrorCode != 0 {
		t.Fatalf("%s %v", errName(r.ErrorCode), r.ErrorMessage)
	}
	want := map[string]string{"segment.bytes": "1048576", "retention.bytes": "4096"}
	if got := ab.b.topic("alt").Configs; !maps.Equal(got, want) {
		t.Fatalf("overrides %v, want %v (the old ones must go)", got, want)
	}
	for _, p := range ab.b.topic("alt").Partitions {
		lc := p.Log().Config()
		if lc.SegmentBytes != 1048576 || lc.RetentionBytes != 4096 || lc.RetentionMs != 7*24*3600*1000 || lc.CleanupPolicy != "delete" {
			t.Fatalf("partition %d log config %+v", p.Index, lc)
		}
	}
	got := configsByName(describeConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "alt"))
	if c := got["retention.ms"]; c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("retention.ms after replace: %v %v", strOrNull(c.Value), c.Source)
	}

	bad := alterConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "alt", false, "segment.bytes", "tiny")
	if bad.ErrorCode != kerr.InvalidConfig.Code || bad.ErrorMessage == nil || !strings.Contains(*bad.ErrorMessage, "segment.bytes") {
		t.Fatalf("bad value: %s %v", errName(bad.ErrorCode), strOrNull(bad.ErrorMessage))
	}
	if r := alterConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "alt", true, "retention.ms", "5"); r.ErrorCode != 0 {
		t.Fatalf("validate only: %s", errName(r.ErrorCode))
	}
	if got := ab.b.topic("alt").Configs; !maps.Equal(got, want) {
		t.Fatalf("a failed or validate-only request changed the overrides to %v", got)
	}
	if r := alterConfigs(t, ab, kmsg.ConfigResourceTypeTopic, "nope", false, "retention.ms", "5"); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %s", errName(r.ErrorCode))
	}
}

func TestAlterConfigsBrokerStaticKeysRefused(t *testing.T) {
	ab := startAdminBroker(t)
	r := alterConfigs(t, ab, kmsg.ConfigResourceTypeBroker, "0", false, "log.retention.hours", "1")
	if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, "Cannot update these configs dynamically: Set(log.retention.hours)") {
		t.Fatalf("%s %v", errName(r.ErrorCode), strOrNull(r.ErrorMessage))
	}
	if r := alterConfigs(t, ab, kmsg.ConfigResourceTypeBroker, "0", false); r.ErrorCode != 0 {
		t.Fatalf("empty change: %s", errName(r.ErrorCode))
	}
	if r := alterConfigs(t, ab, kmsg.ConfigResourceTypeBroker, "3", false); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("other broker: %s", errName(r.ErrorCode))
	}
}
