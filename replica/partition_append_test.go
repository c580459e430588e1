package replica

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

// idempotentBatch is a batch of n records from producer 42 at epoch 0.
func idempotentBatch(t *testing.T, base int64, leaderEpoch int32, seq int32, n int) logstore.Batch {
	t.Helper()
	recs := make([]logstore.Record, n)
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		recs[i].Value = []byte{byte(seq), byte(i)}
	}
	bt, err := logstore.EncodeBatch(logstore.BatchOptions{BaseOffset: base, PartitionLeaderEpoch: leaderEpoch,
		ProducerID: 42, ProducerEpoch: 0, BaseSequence: seq}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

// The leader's write path refuses an acks=-1 produce below
// min.insync.replicas before the producer table or the log see it: the
// same batch is accepted (not judged a duplicate) once acks allow it.
func TestAppendAsLeaderChecksMinIsrFirst(t *testing.T) {
	l := logtest.New(t, logstore.DefaultConfig())
	p := New("t", 0, [16]byte{}, l, 0, Options{LocalID: 1, MinInsyncReplicas: 2, ReplicaLagTimeMax: time.Minute})
	if !p.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, Isr: []int32{1}, Replicas: []int32{1, 2}}) {
		t.Fatal("BecomeLeader refused")
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 0, 2)}, -1, AppendRules{LogAppendTime: -1}); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=-1 with ISR 1 < min.insync.replicas 2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if l.LogEndOffset() != 0 || len(l.ActiveProducers()) != 0 {
		t.Fatalf("a refused produce touched the log (LEO %d) or the producer table (%d)", l.LogEndOffset(), len(l.ActiveProducers()))
	}
	info, err := p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 0, 2)}, 1, AppendRules{LogAppendTime: -1})
	if err != nil || info.Duplicate || info.FirstOffset != 0 || info.LastOffset != 1 {
		t.Fatalf("acks=1: %+v %v", info, err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 0, 1)}, 5, AppendRules{LogAppendTime: -1}); !errors.Is(err, kerr.InvalidRequiredAcks) {
		t.Fatalf("acks=5: %v", err)
	}
}

// Acceptance of issue 10 item 4 at the replica level: the batches a
// follower replicates build its producer table, so that once it becomes
// leader it continues the producer's sequence (and recognises a retry of
// the last batch) with no rebuild from the log.
func TestFollowerAppendsBuildProducerStateForNewLeader(t *testing.T) {
	l := logtest.New(t, logstore.DefaultConfig())
	p := New("t", 0, [16]byte{}, l, 0, Options{LocalID: 2, ReplicaLagTimeMax: time.Minute, MinInsyncReplicas: 1})
	if !p.BecomeFollower(1, 1) {
		t.Fatal("BecomeFollower refused")
	}
	// The old leader wrote sequences 0-2, 3-4, 5-7 at offsets 0-7.
	next := int64(0)
	for _, b := range [][2]int32{{0, 3}, {3, 2}, {5, 3}} {
		if _, err := p.AppendAsFollower([]logstore.Batch{idempotentBatch(t, next, 1, b[0], int(b[1]))}); err != nil {
			t.Fatal(err)
		}
		next += int64(b[1])
	}
	prods := l.ActiveProducers()
	if len(prods) != 1 || prods[0].ID != 42 || prods[0].LastSeq() != 7 || prods[0].LastOffset() != 7 {
		t.Fatalf("after replication the follower's table is %+v, want producer 42 at sequence 7, offset 7", prods)
	}
	if !p.BecomeLeader(LeaderAndIsr{Leader: 2, LeaderEpoch: 2, Isr: []int32{2}, Replicas: []int32{1, 2}}) {
		t.Fatal("BecomeLeader refused")
	}
	rules := AppendRules{LogAppendTime: -1}
	// The producer retries its last batch: the new leader answers
	// with the original offsets and appends nothing.
	info, err := p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 5, 3)}, -1, rules)
	if err != nil || !info.Duplicate || info.FirstOffset != 5 || info.LastOffset != 7 || l.LogEndOffset() != 8 {
		t.Fatalf("retry of sequences 5-7: %+v %v (LEO %d), want a duplicate at 5-7", info, err, l.LogEndOffset())
	}
	// A gap in the sequence is refused.
	if _, err := p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 9, 1)}, -1, rules); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("sequence 9 after 7: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	// The next sequence continues.
	info, err = p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 8, 2)}, -1, rules)
	if err != nil || info.Duplicate || info.FirstOffset != 8 || info.LastOffset != 9 {
		t.Fatalf("sequence 8: %+v %v, want offsets 8-9", info, err)
	}
}
