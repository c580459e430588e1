package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A follower whose last fetched epoch ended earlier on the leader gets the
// diverging epoch and no records (KIP-320): it truncates and fetches again.
// A restarted broker that was leader of a write the cluster never committed
// takes this path on its first fetch.
func TestFollowerFetchDivergingEpoch(t *testing.T) {
	b := newClusterBroker(t)
	id := [16]byte{4, 5, 6}
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

	// Replica 2 wrote offsets 2-4 at epoch 5 while it led, which nobody kept.
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes = 12, 2, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.LastFetchedEpoch, fp.CurrentLeaderEpoch = 1, 5, 5, 6
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	req.Topics = []kmsg.FetchRequestTopic{ft}

	resp := handle[*kmsg.FetchResponse](t, b, req)
	got := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
		t.Fatalf("diverging fetch: %v", err)
	}
	if got.DivergingEpoch.Epoch != 5 || got.DivergingEpoch.EndOffset != 2 {
		t.Fatalf("diverging epoch %+v, want epoch 5 ending at 2", got.DivergingEpoch)
	}
	if len(got.RecordBatches) != 0 {
		t.Fatalf("%d bytes of records with a diverging epoch", len(got.RecordBatches))
	}
}
