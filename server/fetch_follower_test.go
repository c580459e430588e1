package server

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica"
)

// consumerFetch is a consumer's fetch of partition p of "t" (by name and
// id) at offset, from the given rack.
func consumerFetch(version int16, p int32, offset int64, rack string) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.Rack = version, -1, 1<<20, rack
	req.SessionEpoch = -1 // sessionless
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = "t", leaderTopicID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.CurrentLeaderEpoch, fp.PartitionMaxBytes = p, offset, -1, 1<<20
	ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
	req.Topics = []kmsg.FetchRequestTopic{ft}
	return req
}

// fetchedEnd is the offset after the last record batch in b (the fetch
// offset when there is none).
func fetchedEnd(t *testing.T, b []byte, from int64) int64 {
	t.Helper()
	end := from
	for len(b) >= 12 {
		n := int(binary.BigEndian.Uint32(b[8:12])) + 12
		if n > len(b) {
			break // a partial batch at the end of a read
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b[:n]); err != nil {
			t.Fatal(err)
		}
		end = rb.FirstOffset + int64(rb.LastOffsetDelta) + 1
		b = b[n:]
	}
	return end
}

// rackedMetadata is updateMetadata with broker 1 in rack r1 and broker 2
// in r2.
func rackedMetadata(controllerEpoch int32, states ...kmsg.UpdateMetadataRequestTopicPartition) *kmsg.UpdateMetadataRequest {
	r := updateMetadata(controllerEpoch, leaderTopicID, states...)
	for i := range r.LiveBrokers {
		rack := map[int32]string{1: "r1", 2: "r2"}[r.LiveBrokers[i].ID]
		r.LiveBrokers[i].Rack = &rack
	}
	return r
}

// The leader (broker 1, rack r1) with replica.selector.class
// RackAwareReplicaSelector answers a v11+ consumer in rack r2, where the
// in-sync follower 2 is, with preferred_read_replica 2 and no records, at
// once; a consumer of its own rack, one sending no rack, one before v11
// and every consumer under LeaderSelector read the records here.
func TestLeaderNamesPreferredReadReplica(t *testing.T) {
	b := newClusterBroker(t)
	b.replicaSelector = replica.SelectRackAware
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, rackedMetadata(3, umState(1, 1, 5)))
	produceTwo(t, b)

	// Before follower 2 fetched, the leader knows nothing of its log: no
	// preferred replica.
	resp := handle[*kmsg.FetchResponse](t, b, consumerFetch(11, 1, 0, "r2"))
	if got := resp.Topics[0].Partitions[0]; got.PreferredReadReplica != -1 || got.ErrorCode != 0 {
		t.Fatalf("before the follower fetched: preferred %d, error %d; want -1, 0", got.PreferredReadReplica, got.ErrorCode)
	}

	f := replica2Fetch(12, 2, 5)
	f.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
	if got := handle[*kmsg.FetchResponse](t, b, f).Topics[0].Partitions[0]; got.ErrorCode != 0 || got.HighWatermark != 2 {
		t.Fatalf("follower fetch: error %d, HW %d", got.ErrorCode, got.HighWatermark)
	}

	for _, version := range []int16{11, 13, 17} {
		req := consumerFetch(version, 1, 0, "r2")
		req.MaxWaitMillis, req.MinBytes = 30000, 1<<20 // answered at once all the same
		got := handle[*kmsg.FetchResponse](t, b, req).Topics[0].Partitions[0]
		if got.ErrorCode != 0 || got.PreferredReadReplica != 2 || len(got.RecordBatches) != 0 {
			t.Fatalf("v%d rack r2: error %d, preferred %d, %d record bytes; want 0, 2, none",
				version, got.ErrorCode, got.PreferredReadReplica, len(got.RecordBatches))
		}
		if got.HighWatermark != 2 || got.LogStartOffset != 0 || got.LastStableOffset != 2 {
			t.Fatalf("v%d rack r2: offsets HW %d, log start %d, LSO %d; want 2, 0, 2", version, got.HighWatermark, got.LogStartOffset, got.LastStableOffset)
		}
	}
	// The follower holds nothing past its log end offset: a consumer
	// there stays on the leader.
	if got := handle[*kmsg.FetchResponse](t, b, consumerFetch(11, 1, 3, "r2")).Topics[0].Partitions[0]; got.PreferredReadReplica != -1 {
		t.Fatalf("fetch past the follower's log end: preferred %d, want -1", got.PreferredReadReplica)
	}
	for _, c := range []struct {
		name    string
		version int16
		rack    string
	}{{"own rack", 11, "r1"}, {"no rack", 11, ""}, {"rack without replicas", 11, "r9"}, {"v10", 10, "r2"}} {
		got := handle[*kmsg.FetchResponse](t, b, consumerFetch(c.version, 1, 0, c.rack)).Topics[0].Partitions[0]
		if got.ErrorCode != 0 || got.PreferredReadReplica != -1 || fetchedEnd(t, got.RecordBatches, 0) != 2 {
			t.Fatalf("%s: error %d, preferred %d, read to %d; want 0, -1, 2", c.name, got.ErrorCode, got.PreferredReadReplica, fetchedEnd(t, got.RecordBatches, 0))
		}
	}
	b.replicaSelector = replica.SelectLeader
	if got := handle[*kmsg.FetchResponse](t, b, consumerFetch(11, 1, 0, "r2")).Topics[0].Partitions[0]; got.PreferredReadReplica != -1 || fetchedEnd(t, got.RecordBatches, 0) != 2 {
		t.Fatalf("LeaderSelector: preferred %d, read to %d; want -1, 2", got.PreferredReadReplica, fetchedEnd(t, got.RecordBatches, 0))
	}
}

// A follower serves a v11+ consumer's fetch up to its own high
// watermark: offsets between its HW and its log end read nothing, past the
// log end are OFFSET_OUT_OF_RANGE. A consumer before v11 may read only the
// leader; a stopped replica serves nobody.
func TestFollowerServesConsumerToHighWatermark(t *testing.T) {
	b := newClusterBroker(t)
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, rackedMetadata(3, umState(1, 1, 5)))
	produceTwo(t, b)
	f := replica2Fetch(12, 2, 5)
	f.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
	handle[*kmsg.FetchResponse](t, b, f) // HW 2
	produceTwo(t, b)                     // LEO 4, HW still 2
	// Broker 2 takes over; this broker follows it and keeps HW 2.
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 2, 6)))

	got := handle[*kmsg.FetchResponse](t, b, consumerFetch(12, 1, 0, "r1")).Topics[0].Partitions[0]
	if got.ErrorCode != 0 || got.HighWatermark != 2 || got.PreferredReadReplica != -1 {
		t.Fatalf("consumer on the follower: error %s, HW %d, preferred %d; want none, 2, -1", kerr.ErrorForCode(got.ErrorCode), got.HighWatermark, got.PreferredReadReplica)
	}
	if end := fetchedEnd(t, got.RecordBatches, 0); end != 2 {
		t.Fatalf("consumer on the follower read to %d, want its HW 2", end)
	}
	got = handle[*kmsg.FetchResponse](t, b, consumerFetch(12, 1, 3, "")).Topics[0].Partitions[0]
	if got.ErrorCode != 0 || len(got.RecordBatches) != 0 {
		t.Fatalf("fetch between HW and log end: error %d, %d bytes; want none, none", got.ErrorCode, len(got.RecordBatches))
	}
	got = handle[*kmsg.FetchResponse](t, b, consumerFetch(12, 1, 5, "")).Topics[0].Partitions[0]
	if kerr.ErrorForCode(got.ErrorCode) != kerr.OffsetOutOfRange {
		t.Fatalf("fetch past the log end: %v, want OFFSET_OUT_OF_RANGE", kerr.ErrorForCode(got.ErrorCode))
	}
	got = handle[*kmsg.FetchResponse](t, b, consumerFetch(10, 1, 0, "")).Topics[0].Partitions[0]
	if kerr.ErrorForCode(got.ErrorCode) != kerr.NotLeaderForPartition {
		t.Fatalf("v10 consumer on the follower: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(got.ErrorCode))
	}
	// The leader epoch the consumer names is checked against the
	// follower's.
	stale := consumerFetch(12, 1, 0, "")
	stale.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
	if got := handle[*kmsg.FetchResponse](t, b, stale).Topics[0].Partitions[0]; kerr.ErrorForCode(got.ErrorCode) != kerr.FencedLeaderEpoch {
		t.Fatalf("stale epoch on the follower: %v, want FENCED_LEADER_EPOCH", kerr.ErrorForCode(got.ErrorCode))
	}

	// A long-poll on the follower ends when the follower's HW moves.
	p := b.replicas.Get("t", 1)
	wait := consumerFetch(12, 1, 2, "")
	wait.MaxWaitMillis, wait.MinBytes = 20000, 1
	done := make(chan kmsg.FetchResponseTopicPartition, 1)
	start := time.Now()
	go func() { done <- handle[*kmsg.FetchResponse](t, b, wait).Topics[0].Partitions[0] }()
	time.Sleep(100 * time.Millisecond)
	p.SetLeaderHighWatermark(4)
	select {
	case got := <-done:
		if got.ErrorCode != 0 || got.HighWatermark != 4 || fetchedEnd(t, got.RecordBatches, 2) != 4 {
			t.Fatalf("long-poll on the follower: error %d, HW %d, read to %d; want 0, 4, 4", got.ErrorCode, got.HighWatermark, fetchedEnd(t, got.RecordBatches, 2))
		}
		if waited := time.Since(start); waited > 10*time.Second {
			t.Fatalf("long-poll on the follower answered after %v, at its timeout, not at the HW move", waited)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("long-poll on the follower never answered")
	}

	p.Stop()
	if p.ServesConsumers() {
		t.Fatal("a stopped replica serves consumers")
	}
}
