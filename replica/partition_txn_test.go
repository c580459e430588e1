package replica

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

func txnBatch(t *testing.T, pid int64, seq int32, n int) logstore.Batch {
	t.Helper()
	recs := make([]logstore.Record, n)
	for i := range recs {
		recs[i] = logstore.Record{Key: []byte{byte(i)}, Value: []byte{byte(seq)}, Timestamp: 1}
	}
	b, err := logstore.EncodeBatch(logstore.BatchOptions{PartitionLeaderEpoch: -1, ProducerID: pid, BaseSequence: seq, Transactional: true}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readCommitted(t *testing.T, p *Partition, offset int64) (int, ReadInfo) {
	t.Helper()
	rr, info, err := p.ReadIsolated(offset, 1<<20, true, FetchTxnCommitted)
	if err != nil {
		t.Fatal(err)
	}
	return rr.Len(), info
}

// A transaction's records stay invisible to read_committed consumers until
// its marker is below the high watermark; then the consumer reads them
// with the aborted transaction that tells it to drop them. Long-polls of
// read_committed consumers wait on the LSO.
func TestReadCommittedFollowsTheLastStableOffset(t *testing.T) {
	l := logtest.New(t, logstore.DefaultConfig())
	p := New("t", 0, [16]byte{}, l, 0, Options{LocalID: 1, MinInsyncReplicas: 1, ReplicaLagTimeMax: time.Minute})
	if !p.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, Isr: []int32{1, 2}, Replicas: []int32{1, 2}}) {
		t.Fatal("BecomeLeader refused")
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 7, 0, 2)}, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{idempotentBatch(t, 0, 0, 0, 1)}, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	if err := p.UpdateFollowerFetch(2, 3, 0, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	n, info := readCommitted(t, p, 0)
	if n != 0 || info.HighWatermark != 3 || info.LastStableOffset != 0 || info.AbortedTransactions == nil || len(info.AbortedTransactions) != 0 {
		t.Fatalf("during the transaction: %d bytes, %+v", n, info)
	}
	if _, end, _ := p.FetchWaitOffsets(-1, FetchTxnCommitted); end != 0 {
		t.Fatalf("read_committed wait end %d, want the LSO 0", end)
	}
	if _, end, _ := p.FetchWaitOffsets(-1, FetchHighWatermark); end != 3 {
		t.Fatalf("read_uncommitted wait end %d, want the HW 3", end)
	}
	m := logstore.Marker{ProducerID: 7, ProducerEpoch: 0, Commit: false, CoordinatorEpoch: 0}
	info2, err := p.AppendMarkerAsLeader(m, -1)
	if err != nil || info2.FirstOffset != 3 {
		t.Fatalf("marker: %+v %v", info2, err)
	}
	if _, info := readCommitted(t, p, 0); info.LastStableOffset != 0 {
		t.Fatalf("LSO %d before the marker is replicated, want 0", info.LastStableOffset)
	}
	if err := p.UpdateFollowerFetch(2, 4, 0, l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	n, info = readCommitted(t, p, 0)
	want := []logstore.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 3, LastStableOffset: 4}}
	if n == 0 || info.LastStableOffset != 4 || !slices.Equal(info.AbortedTransactions, want) {
		t.Fatalf("after replication: %d bytes, %+v", n, info)
	}
	if _, end, _ := p.FetchWaitOffsets(-1, FetchTxnCommitted); end != 4 {
		t.Fatalf("read_committed wait end %d, want 4", end)
	}
	if _, info, _ := p.Read(0, 1<<20, true); info.AbortedTransactions != nil || info.LastStableOffset != 4 {
		t.Fatalf("read_uncommitted: %+v", info)
	}
	// The marker's own rules: epochs, and the partition's.
	if _, err := p.AppendMarkerAsLeader(logstore.Marker{ProducerID: 7, ProducerEpoch: -1}, 1); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("older producer epoch: %v", err)
	}
	if !p.BecomeFollower(2, 2) {
		t.Fatal("BecomeFollower refused")
	}
	if _, err := p.AppendMarkerAsLeader(m, 1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("not leader: %v", err)
	}
}

func TestAppendMarkerChecksMinIsr(t *testing.T) {
	l := logtest.New(t, logstore.DefaultConfig())
	p := New("t", 0, [16]byte{}, l, 0, Options{LocalID: 1, MinInsyncReplicas: 2, ReplicaLagTimeMax: time.Minute})
	if !p.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, Isr: []int32{1}, Replicas: []int32{1, 2}}) {
		t.Fatal("BecomeLeader refused")
	}
	m := logstore.Marker{ProducerID: 7, Commit: true}
	if _, err := p.AppendMarkerAsLeader(m, -1); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=-1 below min.insync.replicas: %v", err)
	}
	if l.LogEndOffset() != 0 {
		t.Fatal("a refused marker was appended")
	}
	if _, err := p.AppendMarkerAsLeader(m, 1); err != nil {
		t.Fatalf("acks=1: %v", err)
	}
}

// The group coordinator's transactional offset commits all start at
// sequence 0; with OriginCoordinator none is taken for a retry.
func TestCoordinatorAppendsAreNotDuplicates(t *testing.T) {
	l := logtest.New(t, logstore.DefaultConfig())
	p := NewLeader("t", 0, [16]byte{}, l, 1)
	rules := AppendRules{LogAppendTime: -1, Origin: OriginCoordinator}
	for i := 0; i < 3; i++ {
		info, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 9, 0, 1)}, 1, rules)
		if err != nil || info.Duplicate || info.FirstOffset != int64(i) {
			t.Fatalf("commit %d: %+v %v", i, info, err)
		}
	}
}

// A follower replicates the leader's transactional batches and markers;
// promoted, it has the same last stable offset and aborted transactions,
// and fences the coordinator epoch the old leader saw.
func TestPromotedFollowerKeepsTransactions(t *testing.T) {
	ll := logtest.New(t, logstore.DefaultConfig())
	leader := NewLeader("t", 0, [16]byte{}, ll, 1)
	if _, err := leader.AppendAsLeader([]logstore.Batch{txnBatch(t, 7, 0, 2)}, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.AppendAsLeader([]logstore.Batch{txnBatch(t, 8, 0, 1)}, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.AppendMarkerAsLeader(logstore.Marker{ProducerID: 7, CoordinatorEpoch: 3}, 1); err != nil {
		t.Fatal(err)
	}
	rr, _, err := leader.Read(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	data, err := rr.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	batches, err := logstore.ParseBatches(data)
	if err != nil {
		t.Fatal(err)
	}
	fl := logtest.New(t, logstore.DefaultConfig())
	f := New("t", 0, [16]byte{}, fl, 0, Options{LocalID: 2, MinInsyncReplicas: 1, ReplicaLagTimeMax: time.Minute})
	if !f.BecomeFollower(1, 1) {
		t.Fatal("BecomeFollower refused")
	}
	if _, err := f.AppendAsFollower(batches); err != nil {
		t.Fatal(err)
	}
	if !f.BecomeLeader(LeaderAndIsr{Leader: 2, LeaderEpoch: 2, Isr: []int32{2}, Replicas: []int32{2}}) {
		t.Fatal("BecomeLeader refused")
	}
	want := []logstore.AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 3, LastStableOffset: 2}}
	if got, _ := fl.AbortedTransactions(0, 4); !slices.Equal(got, want) {
		t.Fatalf("promoted follower's aborted txns %+v, want %+v", got, want)
	}
	if got := f.LastStableOffset(); got != 2 {
		t.Fatalf("promoted follower's LSO %d, want 2 (producer 8's open transaction)", got)
	}
	if _, err := f.AppendMarkerAsLeader(logstore.Marker{ProducerID: 7, CoordinatorEpoch: 2}, 1); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("zombie coordinator on the new leader: %v", err)
	}
}
