package kafkazk

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestCreateTopicErrors(t *testing.T) {
	h := newTestTree(t, 1, 2, 3)
	id := h.newTopicID
	first := func(int) int { return 0 }
	if _, err := CreateTopic(h.admin, "orders", 2, 3, nil, map[string]string{"cleanup.policy": "compact"}, false, first, id); err != nil {
		t.Fatal(err)
	}
	z := h.topicZNode("orders")
	if len(z.Partitions) != 2 || len(z.Partitions[0]) != 3 || z.TopicID == ([16]byte{}) {
		t.Errorf("topic znode %+v", z)
	}
	cfg, _, err := h.admin.Get(ConfigEntityPath(ConfigTypeTopic, "orders"))
	if err != nil || string(cfg) != `{"version":1,"config":{"cleanup.policy":"compact"}}` {
		t.Errorf("config znode %s %v", cfg, err)
	}
	for _, tc := range []struct {
		name    string
		p       int32
		rf      int16
		assign  map[int32][]int32
		code    *kerr.Error
		message string
	}{
		{"orders", 1, 1, nil, kerr.TopicAlreadyExists, "Topic 'orders' already exists."},
		{"big", 1, 4, nil, kerr.InvalidReplicationFactor, "Replication factor: 4 larger than available brokers: 3."},
		{"bad/name", 1, 1, nil, kerr.InvalidTopicException, "contains a character other than ASCII alphanumerics"},
		{"..", 1, 1, nil, kerr.InvalidTopicException, `Topic name cannot be "." or ".."`},
		{strings.Repeat("x", 250), 1, 1, nil, kerr.InvalidTopicException, "can't be longer than 249 characters"},
		{"mixed", -1, -1, map[int32][]int32{0: {1, 2}, 1: {1}}, kerr.InvalidReplicaAssignment, "All partitions should have the same number of replicas"},
		{"dup", -1, -1, map[int32][]int32{0: {1, 1}}, kerr.InvalidReplicaAssignment, "Duplicate replica assignment found"},
		{"gap", -1, -1, map[int32][]int32{0: {1}, 2: {1}}, kerr.InvalidReplicaAssignment, "consecutive 0-based"},
		{"both", 1, 1, map[int32][]int32{0: {1}}, kerr.InvalidRequest, "Both numPartitions"},
		{"zero", 0, 1, nil, kerr.InvalidPartitions, "Number of partitions must be larger than 0."},
	} {
		_, err := CreateTopic(h.admin, tc.name, tc.p, tc.rf, tc.assign, nil, false, first, id)
		var ke *KafkaError
		if !errors.Is(err, tc.code) || !errors.As(err, &ke) || !strings.Contains(ke.Message, tc.message) {
			t.Errorf("%s: got %v, want %v containing %q", tc.name[:min(len(tc.name), 10)], err, tc.code, tc.message)
		}
	}
	// '.' and '_' collide.
	if _, err := CreateTopic(h.admin, "a.b", 1, 1, nil, nil, false, first, id); err != nil {
		t.Fatal(err)
	}
	_, err = CreateTopic(h.admin, "a_b", 1, 1, nil, nil, false, first, id)
	var ke *KafkaError
	if !errors.As(err, &ke) || ke.Code != kerr.InvalidTopicException || ke.Message != "Topic 'a_b' collides with existing topic: a.b" {
		t.Errorf("collision: %v", err)
	}
	// validateOnly writes nothing.
	if _, err := CreateTopic(h.admin, "dry", 1, 1, nil, nil, true, first, id); err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := h.admin.Exists(TopicPath("dry")); ok {
		t.Error("validateOnly created the topic")
	}
	// A topic marked for deletion cannot be created again yet.
	if err := MarkTopicForDeletion(h.admin, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := h.admin.Delete(TopicPath("orders"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateTopic(h.admin, "orders", 1, 1, nil, nil, false, first, id); !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Errorf("marked for deletion: %v", err)
	}
	if err := MarkTopicForDeletion(h.admin, "nope"); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("deleting an unknown topic: %v", err)
	}
}

func TestCreatePartitionsErrors(t *testing.T) {
	h := newTestTree(t, 1, 2, 3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}, 1: {2, 3}})
	for _, tc := range []struct {
		count  int32
		assign [][]int32
		code   *kerr.Error
		msg    string
	}{
		{1, nil, kerr.InvalidPartitions, "Topic currently has 2 partitions, which is higher than the requested 1."},
		{2, nil, kerr.InvalidPartitions, "Topic already has 2 partitions."},
		{4, [][]int32{{1, 2}}, kerr.InvalidReplicaAssignment, "Increasing the number of partitions by 2 but 1 assignments provided."},
		{3, [][]int32{{1}}, kerr.InvalidReplicaAssignment, "Inconsistent replication factor"},
		{3, [][]int32{{1, 9}}, kerr.InvalidReplicaAssignment, "Unknown broker(s) in replica assignment: 9."},
		{3, [][]int32{{1, 1}}, kerr.InvalidReplicaAssignment, "Duplicate brokers"},
	} {
		err := CreatePartitions(h.admin, "orders", tc.count, tc.assign, false, nil)
		var ke *KafkaError
		if !errors.As(err, &ke) || ke.Code != tc.code || !strings.Contains(ke.Message, tc.msg) {
			t.Errorf("count %d %v: %v", tc.count, tc.assign, err)
		}
	}
	if err := CreatePartitions(h.admin, "nope", 3, nil, false, nil); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
}
