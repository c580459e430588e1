package replica

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
	"github.com/kbroker/kbroker/purgatory"
)

func appendOne(t *testing.T, p *Partition, n int) {
	t.Helper()
	recs := make([]logstore.Record, n)
	bt, err := logstore.EncodeBatch(logstore.BatchOptions{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{bt}, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
}

// checkRecorder is a DelayedOperations that records the checks it was
// asked for and what each check saw, reading the partition as a delayed
// operation does (which would deadlock were it called under the lock).
type checkRecorder struct{ seenHW []int64 }

func (r *checkRecorder) CheckAndComplete(p *Partition) int {
	r.seenHW = append(r.seenHW, p.HighWatermark())
	return 0
}

func TestAppendAdvancesHighWatermarkAndWakes(t *testing.T) {
	rec := &checkRecorder{}
	p := NewLeaderWith("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 3, rec)
	rec.seenHW = nil // BecomeLeader's own check
	appendOne(t, p, 4)
	if len(rec.seenHW) != 1 || rec.seenHW[0] != 4 {
		t.Fatalf("an append that moves the high watermark must have waiters checked once, after the move: saw %v", rec.seenHW)
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

// triedOp is a delayed operation that never completes by itself; it
// counts how often it was checked.
type triedOp struct{ tries int }

func (o *triedOp) TryComplete(time.Time) bool { o.tries++; return false }

// One delayed operation hears every partition it watches, without
// blocking the appender, and nothing once it completed; another
// operation's watch is unaffected.
// One watch channel hears every partition it is registered with, without
// blocking the appender when nobody drains it, and nothing after Unwatch.
func TestWatchPokesWithoutBlocking(t *testing.T) {
	clock := clocktest.NewFake(time.Unix(0, 0))
	purg := purgatory.New[*Partition](clock)
	a := NewLeaderWith("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0, purg)
	b := NewLeaderWith("t", 1, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0, purg)
	both, onlyB := &triedOp{}, &triedOp{}
	d := purg.TryCompleteElseWatch(both, []*Partition{a, b}, clock.Now(), clock.Now().Add(time.Minute))
	purg.TryCompleteElseWatch(onlyB, []*Partition{b}, clock.Now(), clock.Now().Add(time.Minute))
	base := both.tries
	appendOne(t, b, 1)
	appendOne(t, a, 1)
	if both.tries != base+2 {
		t.Fatalf("an append to each watched partition must check the operation: %d checks, want 2", both.tries-base)
	}
	d.ForceComplete()
	appendOne(t, a, 1)
	if both.tries != base+2 {
		t.Fatal("checked after it completed")
	}
	before := onlyB.tries
	appendOne(t, b, 1)
	if onlyB.tries != before+1 || both.tries != base+2 {
		t.Fatalf("the other operation's watch must still be checked: %d, completed one %d", onlyB.tries-before, both.tries-base-2)
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
	if _, _, d, err := p.ReadForFollower(1, 4, 0, 5, 1<<20, true, true); !errors.Is(err, kerr.OffsetOutOfRange) || d != nil {
		t.Fatalf("epoch the leader never had: %v %+v", err, d)
	}
	if _, _, d, err := p.ReadForFollower(1, 1, 0, 2, 1<<20, true, true); err != nil || d == nil || *d != (DivergingEpoch{Epoch: 2, EndOffset: 0}) {
		t.Fatalf("epoch older than the leader's first: %v %+v", err, d)
	}
	if _, info, d, err := p.ReadForFollower(1, 2, 0, 3, 1<<20, true, true); err != nil || d != nil || info.LogEndOffset != 4 {
		t.Fatalf("same epoch, offset inside it: %v %+v %+v", err, d, info)
	}
}

// controllerIsrWriter answers expansions with err (as a controller that
// refuses or cannot be reached) and applies shrinks.
type controllerIsrWriter struct{ expandErr error }

func (w controllerIsrWriter) WriteIsr(_ string, _ int32, _ int32, c IsrChange) (int32, error) {
	if c.Kind == IsrExpand {
		return 0, w.expandErr
	}
	return c.PartitionEpoch + 1, nil
}

func (controllerIsrWriter) RecordIsrChange(string, int32) {}

// quietOutsider: leader 0 with ISR {0, 1} of replicas {0, 1, 2}; both
// followers fetched offset 2, follower 2's expansion went to a controller
// answering expandErr, then a third record came and only follower 1
// fetched it.
func quietOutsider(t *testing.T, clock *clocktest.Fake, expandErr error) *Partition {
	t.Helper()
	p := New("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0, Options{
		LocalID: 0, ReplicaLagTimeMax: 10 * time.Second, FollowerSilenceMax: 2 * time.Second,
		MinInsyncReplicas: 2, Now: clock.Now, IsrWriter: controllerIsrWriter{expandErr},
	})
	if !p.BecomeLeader(LeaderAndIsr{Leader: 0, LeaderEpoch: 1, Isr: []int32{0, 1}, Replicas: []int32{0, 1, 2}}) {
		t.Fatal("BecomeLeader not applied")
	}
	appendOne(t, p, 2)
	for _, id := range []int32{1, 2} {
		if _, _, _, err := p.ReadForFollower(id, 2, 0, -1, 1<<20, true, true); err != nil {
			t.Fatal(err)
		}
	}
	appendOne(t, p, 1)
	clock.Advance(IneligibleReplicaBackoff + 10*time.Millisecond)
	if _, _, _, err := p.ReadForFollower(1, 3, 0, -1, 1<<20, true, true); err != nil {
		t.Fatal(err)
	}
	if isr := p.Isr(); len(isr) != 2 {
		t.Fatalf("ISR %v: follower 2 was never let in", isr)
	}
	return p
}

// A follower outside the ISR holds the HW back while it counts as caught
// up, and that ends with time, not with a fetch or an append: an
// idempotent producer's retries are duplicates and append nothing. The
// periodic ISR check must move the HW when it ends.
func TestHighWatermarkMovesWhenQuietOutsiderStopsCounting(t *testing.T) {
	clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
	p := quietOutsider(t, clock, ErrIsrWriteUnsent)
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("HW %d: the caught-up follower 2 must hold it at 2 for now", hw)
	}
	clock.Advance(3 * time.Second)
	p.MaybeShrinkIsr()
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("HW %d after follower 2 went quiet, want 3", hw)
	}
}

// A follower the controller refused (its broker is shutting down) holds
// the HW back no more, even once the refusal's backoff is over, until it
// fetches again.
func TestRefusedFollowerHoldsNoHighWatermark(t *testing.T) {
	clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
	p := quietOutsider(t, clock, ErrIsrReplicaIneligible)
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("HW %d: the refused follower 2 held it back", hw)
	}
}
