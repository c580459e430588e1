package server

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCreatePartitions(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "grow", 2, nil)
	ab.createTopic(t, "assign", 1, nil)
	ab.createTopic(t, "dry", 1, nil)

	entry := func(name string, count int32, assignment ...[]int32) kmsg.CreatePartitionsRequestTopic {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, count
		for _, rs := range assignment {
			a := kmsg.NewCreatePartitionsRequestTopicAssignment()
			a.Replicas = rs
			rt.Assignment = append(rt.Assignment, a)
		}
		return rt
	}
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Topics = []kmsg.CreatePartitionsRequestTopic{
		entry("grow", 5),
		entry("assign", 3, []int32{0}, []int32{0}),
		entry("missing", 3),
	}
	resp := request[*kmsg.CreatePartitionsResponse](t, ab.cl, req)
	for _, st := range resp.Topics[:2] {
		if st.ErrorCode != 0 {
			t.Fatalf("%s: %s %v", st.Topic, errName(st.ErrorCode), st.ErrorMessage)
		}
	}
	if c := resp.Topics[2].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("missing: %s", errName(c))
	}
	md := request[*kmsg.MetadataResponse](t, ab.cl, metadataRequest("grow", "assign"))
	if len(md.Topics[0].Partitions) != 5 || len(md.Topics[1].Partitions) != 3 {
		t.Fatalf("metadata partitions %d, %d", len(md.Topics[0].Partitions), len(md.Topics[1].Partitions))
	}

	cases := []struct {
		entry   kmsg.CreatePartitionsRequestTopic
		code    *kerr.Error
		message string
	}{
		{entry("grow", 5), kerr.InvalidPartitions, "already has 5 partition(s)"},
		{entry("grow", 3), kerr.InvalidPartitions, "would not be an increase"},
		{entry("assign", 5, []int32{0}), kerr.InvalidReplicaAssignment, "Attempted to add 2 additional partition(s), but only 1"},
		{entry("assign", 4, []int32{4}), kerr.InvalidReplicaAssignment, "broker 4"},
		{entry("assign", 4, []int32{0, 0}), kerr.InvalidReplicaAssignment, "2 replica(s)"},
	}
	for _, c := range cases {
		req.Topics = []kmsg.CreatePartitionsRequestTopic{c.entry}
		st := request[*kmsg.CreatePartitionsResponse](t, ab.cl, req).Topics[0]
		msg := ""
		if st.ErrorMessage != nil {
			msg = *st.ErrorMessage
		}
		if st.ErrorCode != c.code.Code || !strings.Contains(msg, c.message) {
			t.Errorf("%s to %d: %s %q, want %s with %q", c.entry.Topic, c.entry.Count, errName(st.ErrorCode), msg, c.code.Message, c.message)
		}
	}
	if n := len(ab.b.topic("assign").Partitions); n != 3 {
		t.Fatalf("failed requests changed the partition count to %d", n)
	}

	req.Topics = []kmsg.CreatePartitionsRequestTopic{entry("dry", 4), entry("dry", 4)}
	resp = request[*kmsg.CreatePartitionsResponse](t, ab.cl, req)
	if resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code || resp.Topics[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("duplicate entries: %+v", resp.Topics)
	}
	req.Topics = []kmsg.CreatePartitionsRequestTopic{entry("dry", 4)}
	req.ValidateOnly = true
	if st := request[*kmsg.CreatePartitionsResponse](t, ab.cl, req).Topics[0]; st.ErrorCode != 0 {
		t.Fatalf("validate only: %s", errName(st.ErrorCode))
	}
	if n := len(ab.b.topic("dry").Partitions); n != 1 {
		t.Fatalf("validate_only grew the topic to %d", n)
	}

	// kadm's UpdatePartitions drives the same path as kafka-topics --alter.
	res, err := ab.adm.UpdatePartitions(testCtx(t), 2, "dry")
	if err != nil || res["dry"].Err != nil {
		t.Fatalf("kadm: %v %v", err, res["dry"].Err)
	}
	if n := len(ab.b.topic("dry").Partitions); n != 2 {
		t.Fatalf("dry has %d partitions", n)
	}
}
