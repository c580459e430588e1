package replica

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

// txnBatch is a transactional batch of producer 42 at epoch 0.
func txnBatch(t *testing.T, seq int32) logstore.Batch {
	t.Helper()
	bt, err := logstore.EncodeBatch(logstore.BatchOptions{PartitionLeaderEpoch: -1, ProducerID: 42, BaseSequence: seq, Transactional: true},
		[]logstore.Record{{Value: []byte{byte(seq)}}})
	if err != nil {
		t.Fatal(err)
	}
	return bt
}

func verifyingLeader(t *testing.T) *Partition {
	t.Helper()
	l := logtest.New(t, logstore.DefaultConfig())
	p := New("t", 0, [16]byte{}, l, 0, Options{LocalID: 1, MinInsyncReplicas: 1, ReplicaLagTimeMax: time.Minute, VerifyTransactions: true})
	if !p.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 1, Isr: []int32{1, 2}, Replicas: []int32{1, 2}}) {
		t.Fatal("BecomeLeader refused")
	}
	return p
}

// KIP-890: a transaction's first batch needs the guard of a confirmation
// still in force; later batches of the open transaction need none.
func TestTxnVerificationGuard(t *testing.T) {
	p := verifyingLeader(t)
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 0)}, 1, AppendRules{LogAppendTime: -1}); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("unverified first batch: %v, want INVALID_TXN_STATE", err)
	}
	v, err := p.StartTxnVerification(42)
	if err != nil || !v.Needed || v.Guard == 0 {
		t.Fatalf("StartTxnVerification: %+v %v", v, err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 0)}, 1, AppendRules{LogAppendTime: -1, VerificationGuard: v.Guard + 1}); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("another guard: %v, want INVALID_TXN_STATE", err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 0)}, 1, AppendRules{LogAppendTime: -1, VerificationGuard: v.Guard}); err != nil {
		t.Fatalf("verified first batch: %v", err)
	}
	if v, err := p.StartTxnVerification(42); err != nil || v.Needed {
		t.Fatalf("open transaction: %+v %v, want no verification needed", v, err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 1)}, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatalf("second batch of the open transaction: %v", err)
	}
}

// A marker withdraws a confirmation given before it: the late batch of a
// transaction that ended must not open a new one.
func TestTxnMarkerWithdrawsGuard(t *testing.T) {
	p := verifyingLeader(t)
	v, _ := p.StartTxnVerification(42)
	if _, err := p.AppendMarkerAsLeader(logstore.Marker{ProducerID: 42, Commit: false}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 0)}, 1, AppendRules{LogAppendTime: -1, VerificationGuard: v.Guard}); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("batch verified before the marker: %v, want INVALID_TXN_STATE", err)
	}
}

// A newer leader epoch of the same leadership (the controller shrinking the
// ISR after a follower died) keeps a confirmation in flight; losing and
// regaining the leadership does not.
func TestTxnGuardAcrossLeaderEpochs(t *testing.T) {
	p := verifyingLeader(t)
	v, _ := p.StartTxnVerification(42)
	if !p.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 2, Isr: []int32{1}, Replicas: []int32{1, 2}}) {
		t.Fatal("epoch 2 refused")
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 0)}, 1, AppendRules{LogAppendTime: -1, VerificationGuard: v.Guard}); err != nil {
		t.Fatalf("guard across an ISR change: %v", err)
	}

	p = verifyingLeader(t)
	v, _ = p.StartTxnVerification(42)
	if !p.BecomeFollower(2, 2) || !p.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 3, Isr: []int32{1, 2}, Replicas: []int32{1, 2}}) {
		t.Fatal("leadership change refused")
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{txnBatch(t, 0)}, 1, AppendRules{LogAppendTime: -1, VerificationGuard: v.Guard}); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("guard of an earlier leadership: %v, want INVALID_TXN_STATE", err)
	}
}
