package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A follower whose log ends exactly where its last epoch ends on the
// leader is not diverging: it gets the records of the next epoch. (A Kafka
// follower restarted after leading epoch 5 fetches at the leader's epoch-6
// start offset with last fetched epoch 5.)
func TestFollowerFetchAtEpochBoundary(t *testing.T) {
	b := newClusterBroker(t)
	id := [16]byte{4, 5, 7}
	produce := func() {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 11, 1, 30000
		pt := kmsg.NewProduceRequestTopic()
		pt.Topic = "t"
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition = 1
		pp.Records = rawBatch(t, plainOpts(), 2, time.Now().UnixMilli())
		pt.Partitions = []kmsg.ProduceRequestTopicPartition{pp}
		req.Topics = []kmsg.ProduceRequestTopic{pt}
		resp := handle[*kmsg.ProduceResponse](t, b, req)
		if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
			t.Fatal(err)
		}
	}
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, id, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, id, umState(1, 1, 5)))
	produce() // offsets 0-1 at epoch 5
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, id, laiState(1, 1, 6)))
	produce() // offsets 2-3 at epoch 6

	for _, version := range []int16{12, 16, 17} {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID, req.MaxBytes = version, 2, 1<<20
		req.ReplicaState.ID, req.ReplicaState.Epoch = 2, 10
		if version < 15 {
			req.ReplicaState = kmsg.NewFetchRequestReplicaState()
		}
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic, ft.TopicID = "t", id
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.LastFetchedEpoch, fp.CurrentLeaderEpoch = 1, 2, 5, 6
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
		req.Topics = []kmsg.FetchRequestTopic{ft}
		resp := handle[*kmsg.FetchResponse](t, b, req)
		got := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if got.DivergingEpoch.Epoch != -1 {
			t.Fatalf("v%d: diverging epoch %+v at the epoch boundary", version, got.DivergingEpoch)
		}
		if len(got.RecordBatches) == 0 {
			t.Fatalf("v%d: no records", version)
		}
	}
}
