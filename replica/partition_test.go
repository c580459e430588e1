package replica

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

func appendOne(t *testing.T, p *Partition, n int) {
	t.Helper()
	recs := make([]logstore.Record, n)
	bt, err := logstore.EncodeBatch(logstore.BatchOptions{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{bt}, -1); err != nil {
		t.Fatal(err)
	}
}

func TestAppendAdvancesHighWatermarkAndWakes(t *testing.T) {
	p := NewLeader("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 3)
	changed := p.Changed()
	appendOne(t, p, 4)
	select {
	case <-changed:
	default:
		t.Fatal("an append that moves the high watermark must close Changed")
	}
	if hw := p.HighWatermark(); hw != 4 {
		t.Fatalf("HW %d, want 4", hw)
	}
	rr, info, err := p.Read(0, 1<<20, true)
	if err != nil || rr.Len() == 0 || info.HighWatermark != 4 || info.LogEndOffset != 4 {
		t.Fatalf("read: %v, %d bytes, %+v", err, rr.Len(), info)
	}
	b, _ := rr.Bytes()
	bs, err := logstore.ParseBatches(b)
	if err != nil || bs[0].Header.PartitionLeaderEpoch != 3 {
		t.Fatalf("the leader epoch must be stamped into appended batches: %v %+v", err, bs)
	}
}

func TestCheckLeaderEpoch(t *testing.T) {
	p := NewLeader("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 5)
	for _, c := range []struct {
		epoch int32
		want  error
	}{{-1, nil}, {5, nil}, {4, kerr.FencedLeaderEpoch}, {6, kerr.UnknownLeaderEpoch}} {
		if err := p.CheckLeaderEpoch(c.epoch); !errors.Is(err, c.want) {
			t.Errorf("epoch %d: %v, want %v", c.epoch, err, c.want)
		}
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	p := NewLeader("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0)
	for i := 0; i < 3; i++ {
		appendOne(t, p, 2)
	}
	if _, err := p.DeleteRecordsBefore(7); !errors.Is(err, logstore.ErrOffsetOutOfRange) {
		t.Fatalf("past the HW: %v", err)
	}
	if low, err := p.DeleteRecordsBefore(2); err != nil || low != 2 {
		t.Fatalf("before 2: %d %v", low, err)
	}
	if low, err := p.DeleteRecordsBefore(1); err != nil || low != 2 {
		t.Fatalf("below the log start is a no-op: %d %v", low, err)
	}
	if low, err := p.DeleteRecordsBefore(-1); err != nil || low != 6 {
		t.Fatalf("-1 means the HW: %d %v", low, err)
	}
}

func TestAttachedIsCreatedOnce(t *testing.T) {
	p := NewLeader("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0)
	calls := 0
	init := func() any { calls++; return new(int) }
	a, b := p.Attached(init), p.Attached(init)
	if calls != 1 || a != b {
		t.Fatalf("init called %d times, same value %v", calls, a == b)
	}
}

// One watch channel hears every partition it is registered with, without
// blocking the appender when nobody drains it, and nothing after Unwatch.
func TestWatchPokesWithoutBlocking(t *testing.T) {
	a := NewLeader("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0)
	b := NewLeader("t", 1, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0)
	wake := make(chan struct{}, 1)
	a.Watch(wake)
	b.Watch(wake)
	appendOne(t, b, 1)
	appendOne(t, a, 1) // the buffer is full: must not block
	select {
	case <-wake:
	default:
		t.Fatal("an append to a watched partition must poke the channel")
	}
	a.Unwatch(wake)
	appendOne(t, a, 1)
	select {
	case <-wake:
		t.Fatal("poked after Unwatch")
	default:
	}
	appendOne(t, b, 1)
	select {
	case <-wake:
	default:
		t.Fatal("the other partition's watch must still poke")
	}
}

// A follower's last fetched epoch decides between records, a diverging
// epoch and OFFSET_OUT_OF_RANGE (Fetch v12+, KIP-320).
func TestReadForFollowerChecksLastFetchedEpoch(t *testing.T) {
	p := New("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0, Options{MinInsyncReplicas: 1})
	if !p.BecomeLeader(LeaderAndIsr{Leader: 0, LeaderEpoch: 3, Isr: []int32{0, 1}, Replicas: []int32{0, 1}}) {
		t.Fatal("BecomeLeader not applied")
	}
	appendOne(t, p, 4)
	if _, _, d, err := p.ReadForFollower(1, 4, 0, 5, 1<<20, true); !errors.Is(err, kerr.OffsetOutOfRange) || d != nil {
		t.Fatalf("epoch the leader never had: %v %+v", err, d)
	}
	if _, _, d, err := p.ReadForFollower(1, 1, 0, 2, 1<<20, true); err != nil || d == nil || *d != (DivergingEpoch{Epoch: 2, EndOffset: 0}) {
		t.Fatalf("epoch older than the leader's first: %v %+v", err, d)
	}
	if _, info, d, err := p.ReadForFollower(1, 2, 0, 3, 1<<20, true); err != nil || d != nil || info.LogEndOffset != 4 {
		t.Fatalf("same epoch, offset inside it: %v %+v %+v", err, d, info)
	}
}
