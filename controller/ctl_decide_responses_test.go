package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KAFKA_STORAGE_ERROR partitions, named by topic (old versions) or topic
// id; other errors are normal; a failed request names none.
func TestStorageErrorPartitions(t *testing.T) {
	ctx := decideContext([]int32{1}, nil)
	ctx.topicIDs["orders"] = [16]byte{1}
	r := kmsg.NewPtrLeaderAndISRResponse()
	byName := kmsg.NewLeaderAndISRResponseTopicPartition()
	byName.Topic, byName.Partition, byName.ErrorCode = "legacy", 4, kerr.KafkaStorageError.Code
	stale := kmsg.NewLeaderAndISRResponseTopicPartition()
	stale.Topic, stale.Partition, stale.ErrorCode = "legacy", 5, kerr.StaleControllerEpoch.Code
	r.Partitions = append(r.Partitions, byName, stale)
	rt := kmsg.NewLeaderAndISRResponseTopic()
	rt.TopicID = [16]byte{1}
	for _, p := range []int32{0, 1} {
		rp := kmsg.NewLeaderAndISRResponseTopicPartition()
		rp.Partition = p
		if p == 1 {
			rp.ErrorCode = kerr.KafkaStorageError.Code
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	r.Topics = append(r.Topics, rt)
	failed, err := storageErrorPartitions(ctx, r)
	if err != nil || !slices.Equal(failed, []kafkazk.TopicPartition{{Topic: "legacy", Partition: 4}, {Topic: "orders", Partition: 1}}) {
		t.Errorf("failed %v err %v", failed, err)
	}
	r.ErrorCode = kerr.StaleControllerEpoch.Code
	if failed, err := storageErrorPartitions(ctx, r); !errors.Is(err, kerr.StaleControllerEpoch) || failed != nil {
		t.Errorf("failed request: %v %v", failed, err)
	}
}

func TestReplicasOfDeadBroker(t *testing.T) {
	p0, p1, d0 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{p0: {1, 2}, p1: {1}, d0: {2}})
	ctx.topicsToDelete["doomed"] = true
	offline, deleting := replicasOfDeadBroker(ctx, 2)
	if !slices.Equal(offline, []kafkazk.TopicPartition{p0}) || !slices.Equal(deleting, []kafkazk.TopicPartition{d0}) {
		t.Errorf("offline %v deleting %v", offline, deleting)
	}
}
