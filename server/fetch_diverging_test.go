package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A follower whose last fetched epoch ended earlier on the leader gets the
// diverging epoch and no records (KIP-320): it truncates and fetches again.
// A restarted broker that was leader of a write the cluster never committed
// takes this path on its first fetch.
func TestFollowerFetchDivergingEpoch(t *testing.T) {
	b := leaderOverTwoEpochs(t)

	// Replica 2 wrote offsets 2-4 at epoch 5 while it led, which nobody kept.
	resp := handle[*kmsg.FetchResponse](t, b, replica2Fetch(12, 5, 5))
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

// A follower whose log ends exactly where its last epoch ends on the
// leader is not diverging: it gets the records of the next epoch. (A Kafka
// follower restarted after leading epoch 5 fetches at the leader's epoch-6
// start offset with last fetched epoch 5.)
func TestFollowerFetchAtEpochBoundary(t *testing.T) {
	b := leaderOverTwoEpochs(t)

	for _, version := range []int16{12, 16, 17} {
		req := replica2Fetch(version, 2, 5)
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

// leaderOverTwoEpochs is a cluster broker leading partition 1 of topic "t"
// (id leaderTopicID) with offsets 0-1 written at leader epoch 5 and 2-3 at
// epoch 6.
func leaderOverTwoEpochs(t *testing.T) *Broker {
	t.Helper()
	b := newClusterBroker(t)
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, leaderTopicID, umState(1, 1, 5)))
	produceTwo(t, b)
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 6)))
	produceTwo(t, b)
	return b
}

// leaderTopicID is topic "t"'s id in the leader tests.
var leaderTopicID = [16]byte{4, 5, 6}

// produceTwo appends two records to partition 1 of "t" with acks=1.
func produceTwo(t *testing.T, b *Broker) {
	t.Helper()
	resp := handle[*kmsg.ProduceResponse](t, b, producePartition1(t, 1, 2))
	if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatal(err)
	}
}

// replica2Fetch is replica 2's fetch of partition 1 of "t" (by name and
// id) at fetchOffset, with its last fetched epoch, at the current leader
// epoch 6; the ReplicaState tag from v15 (KIP-903).
func replica2Fetch(version int16, fetchOffset int64, lastFetchedEpoch int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes = version, 2, 1<<20
	if version >= 15 {
		req.ReplicaState.ID, req.ReplicaState.Epoch = 2, 10
	}
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "t", leaderTopicID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.LastFetchedEpoch, fp.CurrentLeaderEpoch = 1, fetchOffset, lastFetchedEpoch, 6
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	req.Topics = []kmsg.FetchRequestTopic{ft}
	return req
}
