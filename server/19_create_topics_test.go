package server

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func createTopicsEntry(name string, partitions int32, rf int16, configs map[string]string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	for _, k := range sortedKeysOf(configs) {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, strp(configs[k])
		rt.Configs = append(rt.Configs, c)
	}
	return rt
}

func TestCreateTopicsReturnsTopicDetails(t *testing.T) {
	ab := startAdminBroker(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Topics = append(req.Topics, createTopicsEntry("events", 5, -1, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}))
	resp := request[*kmsg.CreateTopicsResponse](t, ab.cl, req)
	if resp.Version != 7 {
		t.Fatalf("served v%d, want 7", resp.Version)
	}
	st := resp.Topics[0]
	if st.ErrorCode != 0 || st.ErrorMessage != nil || st.NumPartitions != 5 || st.ReplicationFactor != 1 {
		t.Fatalf("%+v", st)
	}
	tp := ab.b.topic("events")
	if tp == nil || st.TopicID != tp.ID || len(tp.Partitions) != 5 {
		t.Fatalf("topic table %+v, response id %x", tp, st.TopicID)
	}
	got := map[string]kmsg.CreateTopicsResponseTopicConfig{}
	for _, c := range st.Configs {
		got[c.Name] = c
	}
	if c := got["retention.ms"]; c.Value == nil || *c.Value != "1000" || kmsg.ConfigSource(c.Source) != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms %+v", c)
	}
	if c := got["segment.bytes"]; c.Value == nil || *c.Value != "1073741824" || kmsg.ConfigSource(c.Source) != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("segment.bytes %+v", c)
	}
	if tp.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("stored configs %v", tp.Configs)
	}
}

func TestCreateTopicsErrors(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "exists", 1, nil)
	ab.createTopic(t, "dot.ted", 1, nil)

	assigned := func(name string, replicas ...[]int32) kmsg.CreateTopicsRequestTopic {
		rt := createTopicsEntry(name, -1, -1, nil)
		for p, rs := range replicas {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(p), rs
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		return rt
	}
	withBoth := assigned("both", []int32{0})
	withBoth.NumPartitions = 2

	cases := []struct {
		entry   kmsg.CreateTopicsRequestTopic
		code    *kerr.Error
		message string
	}{
		{createTopicsEntry("exists", 1, 1, nil), kerr.TopicAlreadyExists, "Topic 'exists' already exists."},
		{createTopicsEntry("zero", 0, 1, nil), kerr.InvalidPartitions, "invalid non-positive value"},
		{createTopicsEntry("negative", -2, 1, nil), kerr.InvalidPartitions, "invalid non-positive value"},
		{createTopicsEntry("rf0", 1, 0, nil), kerr.InvalidReplicationFactor, "larger than 0"},
		{createTopicsEntry("rf3", 1, 3, nil), kerr.InvalidReplicationFactor, "only 1 broker(s) are registered"},
		{createTopicsEntry("bad/name", 1, 1, nil), kerr.InvalidTopicException, "contains a character other than"},
		{createTopicsEntry("", 1, 1, nil), kerr.InvalidTopicException, "can't be empty"},
		{createTopicsEntry("..", 1, 1, nil), kerr.InvalidTopicException, `cannot be "." or ".."`},
		{createTopicsEntry(strings.Repeat("x", 250), 1, 1, nil), kerr.InvalidTopicException, "longer than 249"},
		{createTopicsEntry("dot_ted", 1, 1, nil), kerr.InvalidTopicException, "collides with existing topic"},
		{createTopicsEntry("cfg-unknown", 1, 1, map[string]string{"no.such": "1"}), kerr.InvalidConfig, "Unknown topic config name: no.such"},
		{createTopicsEntry("cfg-bad", 1, 1, map[string]string{"retention.ms": "soon"}), kerr.InvalidConfig, "retention.ms"},
		{createTopicsEntry("cfg-policy", 1, 1, map[string]string{"cleanup.policy": "shred"}), kerr.InvalidConfig, "cleanup.policy"},
		{withBoth, kerr.InvalidRequest, "Both numPartitions or replicationFactor"},
		{assigned("other-broker", []int32{7}), kerr.InvalidReplicaAssignment, "broker 7"},
		{assigned("dup-replica", []int32{0, 0}), kerr.InvalidReplicaAssignment, "more than once"},
		{assigned("empty-replicas", []int32{}), kerr.InvalidReplicaAssignment, "empty replica list"},
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	for _, c := range cases {
		req.Topics = append(req.Topics, c.entry)
	}
	resp := request[*kmsg.CreateTopicsResponse](t, ab.cl, req)
	if len(resp.Topics) != len(cases) {
		t.Fatalf("%d answers for %d topics", len(resp.Topics), len(cases))
	}
	for i, c := range cases {
		st := resp.Topics[i]
		msg := ""
		if st.ErrorMessage != nil {
			msg = *st.ErrorMessage
		}
		if st.Topic != c.entry.Topic || st.ErrorCode != c.code.Code || !strings.Contains(msg, c.message) {
			t.Errorf("%q: %s %q, want %s containing %q", c.entry.Topic, errName(st.ErrorCode), msg, c.code.Message, c.message)
		}
		if st.NumPartitions != -1 || st.ReplicationFactor != -1 {
			t.Errorf("%q: failed topic reports %d partitions, rf %d", c.entry.Topic, st.NumPartitions, st.ReplicationFactor)
		}
		if c.code != kerr.TopicAlreadyExists && ab.b.topic(c.entry.Topic) != nil {
			t.Errorf("%q was created", c.entry.Topic)
		}
	}
}

func TestCreateTopicsDuplicatesAndAssignment(t *testing.T) {
	ab := startAdminBroker(t)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Topics = append(req.Topics, createTopicsEntry("twice", 1, 1, nil), createTopicsEntry("twice", 2, 1, nil))
	manual := createTopicsEntry("manual", -1, -1, nil)
	for p := int32(0); p < 2; p++ {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = p, []int32{0}
		manual.ReplicaAssignment = append(manual.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, manual)
	resp := request[*kmsg.CreateTopicsResponse](t, ab.cl, req)
	for _, st := range resp.Topics[:2] {
		if st.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("duplicate entry: %s", errName(st.ErrorCode))
		}
	}
	if ab.b.topic("twice") != nil {
		t.Fatal("a topic listed twice was created")
	}
	if st := resp.Topics[2]; st.ErrorCode != 0 || st.NumPartitions != 2 {
		t.Fatalf("manual assignment: %s, %d partitions", errName(st.ErrorCode), st.NumPartitions)
	}
}

func TestCreateTopicsValidateOnly(t *testing.T) {
	ab := startAdminBroker(t, "num.partitions=3")
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly = true
	req.Topics = append(req.Topics, createTopicsEntry("dry", -1, -1, map[string]string{"retention.bytes": "10"}), createTopicsEntry("dry-bad", 1, 1, map[string]string{"segment.bytes": "1"}))
	resp := request[*kmsg.CreateTopicsResponse](t, ab.cl, req)
	if st := resp.Topics[0]; st.ErrorCode != 0 || st.NumPartitions != 3 || st.ReplicationFactor != 1 {
		t.Fatalf("validate only: %s %d partitions", errName(st.ErrorCode), st.NumPartitions)
	}
	if st := resp.Topics[1]; st.ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("validate only, bad config: %s", errName(st.ErrorCode))
	}
	if ab.b.topic("dry") != nil {
		t.Fatal("validate_only created the topic")
	}
	md := request[*kmsg.MetadataResponse](t, ab.cl, metadataRequest("dry"))
	if c := md.Topics[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("metadata after validate_only: %s", errName(c))
	}
}

func TestCreateTopicsOlderVersions(t *testing.T) {
	ab := startAdminBroker(t)
	cl := ab.pinned(t, kmsg.CreateTopics.Int16(), 4)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Topics = append(req.Topics, createTopicsEntry("v4", 2, 1, nil), createTopicsEntry("v4", 2, 1, nil))
	resp := request[*kmsg.CreateTopicsResponse](t, cl, req)
	if resp.Version != 4 || resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("v%d: %+v", resp.Version, resp.Topics)
	}
	req.Topics = req.Topics[:1]
	resp = request[*kmsg.CreateTopicsResponse](t, cl, req)
	if resp.Topics[0].ErrorCode != 0 || ab.b.topic("v4") == nil {
		t.Fatalf("v4 create: %s", errName(resp.Topics[0].ErrorCode))
	}
}
