package server

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type configOp struct {
	op    kmsg.IncrementalAlterConfigOp
	name  string
	value *string
}

func incrementalAlter(t *testing.T, ab *adminBroker, typ kmsg.ConfigResourceType, name string, ops ...configOp) kmsg.IncrementalAlterConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Op, c.Name, c.Value = o.op, o.name, o.value
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return request[*kmsg.IncrementalAlterConfigsResponse](t, ab.cl, req).Resources[0]
}

func TestIncrementalAlterConfigs(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "inc", 1, map[string]*string{"retention.ms": strp("1000"), "max.message.bytes": strp("2000")})
	const (
		set      = kmsg.IncrementalAlterConfigOpSet
		del      = kmsg.IncrementalAlterConfigOpDelete
		appendOp = kmsg.IncrementalAlterConfigOpAppend
		subtract = kmsg.IncrementalAlterConfigOpSubtract
	)
	steps := []struct {
		ops  []configOp
		code *kerr.Error
		want map[string]string
	}{
		{[]configOp{{set, "segment.ms", strp("600000")}, {del, "retention.ms", nil}}, nil,
			map[string]string{"segment.ms": "600000", "max.message.bytes": "2000"}},
		// APPEND starts from the broker default (delete) when there is no override.
		{[]configOp{{appendOp, "cleanup.policy", strp("compact")}}, nil,
			map[string]string{"segment.ms": "600000", "max.message.bytes": "2000", "cleanup.policy": "delete,compact"}},
		{[]configOp{{appendOp, "cleanup.policy", strp("compact")}}, nil,
			map[string]string{"segment.ms": "600000", "max.message.bytes": "2000", "cleanup.policy": "delete,compact"}},
		{[]configOp{{subtract, "cleanup.policy", strp("delete")}}, nil,
			map[string]string{"segment.ms": "600000", "max.message.bytes": "2000", "cleanup.policy": "compact"}},
		{[]configOp{{appendOp, "retention.ms", strp("5")}}, kerr.InvalidConfig, nil},
		{[]configOp{{set, "retention.ms", strp("x")}}, kerr.InvalidConfig, nil},
		{[]configOp{{set, "no.such", strp("1")}}, kerr.InvalidConfig, nil},
		{[]configOp{{set, "retention.ms", strp("1")}, {del, "retention.ms", nil}}, kerr.InvalidRequest, nil},
		{[]configOp{{set, "retention.ms", strp("1")}, {set, "cleanup.policy", strp("nope")}}, kerr.InvalidConfig, nil},
		{[]configOp{{kmsg.IncrementalAlterConfigOp(9), "retention.ms", strp("1")}}, kerr.InvalidRequest, nil},
	}
	last := map[string]string{"retention.ms": "1000", "max.message.bytes": "2000"}
	for i, s := range steps {
		r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeTopic, "inc", s.ops...)
		wantCode := int16(0)
		if s.code != nil {
			wantCode = s.code.Code
		}
		if r.ErrorCode != wantCode {
			t.Fatalf("step %d: %s %v, want %s", i, errName(r.ErrorCode), strOrNull(r.ErrorMessage), errName(wantCode))
		}
		if s.want != nil {
			last = s.want
		}
		if got := ab.b.topic("inc").Configs; !maps.Equal(got, last) {
			t.Fatalf("step %d: overrides %v, want %v", i, got, last)
		}
	}
	if lc := ab.b.topic("inc").Partitions[0].Log().Config(); lc.CleanupPolicy != "compact" || lc.SegmentMs != 600000 {
		t.Fatalf("log config %+v", lc)
	}

	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeTopic, "none", configOp{set, "retention.ms", strp("1")}); r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic: %s", errName(r.ErrorCode))
	}
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "0", configOp{set, "log.retention.hours", strp("4")}); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("broker: %s", errName(r.ErrorCode))
	}
	// Deleting a broker config that is not set is a no-op, as
	// kafka-reassign-partitions --verify does to clear throttles.
	if r := incrementalAlter(t, ab, kmsg.ConfigResourceTypeBroker, "0", configOp{kmsg.IncrementalAlterConfigOpDelete, "leader.replication.throttled.rate", nil}); r.ErrorCode != 0 {
		t.Fatalf("broker delete: %s", errName(r.ErrorCode))
	}

	// The kadm path kafka-configs --alter takes.
	res, err := ab.adm.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.bytes", Value: strp("123")}}, "inc")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.On("inc", nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := ab.b.topic("inc").Configs["retention.bytes"]; got != "123" {
		t.Fatalf("retention.bytes %q", got)
	}
}
