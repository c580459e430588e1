package replica

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

func TestSuspendedLeadershipRefusesWritesUntilResumedOrReplaced(t *testing.T) {
	rec := &checkRecorder{}
	p := NewLeaderWith("t", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 3, rec)
	appendOne(t, p, 2)
	rec.seenHW = nil

	if !p.SuspendLeadership() {
		t.Fatal("a leader's leadership must suspend")
	}
	if len(rec.seenHW) != 1 {
		t.Fatalf("waiting produces must be checked when the leadership is suspended: %d checks", len(rec.seenHW))
	}
	if p.SuspendLeadership() {
		t.Fatal("suspending twice reported a new suspension")
	}
	if !p.LeadershipSuspended() {
		t.Fatal("not reported suspended")
	}
	bt, err := logstore.EncodeBatch(logstore.BatchOptions{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, make([]logstore.Record, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{bt}, 1, AppendRules{LogAppendTime: -1}); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("append while suspended: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if st := p.ProduceWaitState(); st.Leader {
		t.Fatalf("a waiting produce sees a suspended leader as leader: %+v", st)
	}
	if p.LeaderEpoch() != 3 || p.HighWatermark() != 2 {
		t.Fatalf("suspension changed the partition: epoch %d, HW %d", p.LeaderEpoch(), p.HighWatermark())
	}

	if p.ResumeLeadership(2) {
		t.Fatal("resumed at another leader epoch than the one led")
	}
	if !p.ResumeLeadership(3) || p.LeadershipSuspended() {
		t.Fatal("ZooKeeper naming this leader at its epoch must end the suspension")
	}
	appendOne(t, p, 1)

	// A newer decision ends a suspension too.
	p.SuspendLeadership()
	if !p.BecomeFollower(2, 4) || p.LeadershipSuspended() {
		t.Fatal("a follower is not suspended")
	}
	if p.SuspendLeadership() {
		t.Fatal("a follower's leadership suspended")
	}
	if !p.BecomeLeader(LeaderAndIsr{Leader: p.opts.LocalID, LeaderEpoch: 5, Isr: []int32{p.opts.LocalID}, Replicas: []int32{p.opts.LocalID}}) {
		t.Fatal("BecomeLeader")
	}
	p.SuspendLeadership()
	if !p.BecomeLeader(LeaderAndIsr{Leader: p.opts.LocalID, LeaderEpoch: 6, Isr: []int32{p.opts.LocalID}, Replicas: []int32{p.opts.LocalID}}) || p.LeadershipSuspended() {
		t.Fatal("a LeaderAndIsr naming this broker again must end the suspension")
	}
	appendOne(t, p, 1)
}
