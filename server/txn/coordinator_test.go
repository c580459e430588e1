package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestCommitWritesMarkersThenCompletes(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	if pid != 1000 || epoch != 0 {
		t.Fatalf("first InitProducerId: producer %d epoch %d, want 1000 epoch 0", pid, epoch)
	}
	h.wantState("tx", "Empty")
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0), tp("b", 1)), errNone)
	s := h.wantState("tx", "Ongoing")
	if s.StartTimestamp != t0.UnixMilli() || len(s.Topics) != 2 {
		t.Fatalf("Ongoing: %+v", s)
	}
	h.wantCode("add again", h.add("tx", pid, epoch, tp("a", 0)), errNone)

	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	// Answered once PrepareCommit is in the log; the markers follow.
	h.wantState("tx", "PrepareCommit")
	h.wantCode("commit retried while completing", h.end("tx", pid, epoch, true), errConcurrentTransactions)
	h.wantCode("add while completing", h.add("tx", pid, epoch, tp("a", 0)), errConcurrentTransactions)
	// The pending completion answers before the state is looked at.
	h.wantCode("abort while committing", h.end("tx", pid, epoch, false), errConcurrentTransactions)
	if n := len(h.markers.calls()); n != 0 {
		t.Fatalf("%d marker calls before the timers ran", n)
	}

	h.settle()
	calls := h.markers.calls()
	if len(calls) != 1 {
		t.Fatalf("marker calls: %+v", calls)
	}
	m := calls[0]
	if !m.Commit || m.ProducerID != pid || m.ProducerEpoch != epoch || m.CoordinatorEpoch != h.epoch || len(m.Partitions) != 2 {
		t.Fatalf("marker %+v", m)
	}
	h.wantState("tx", "CompleteCommit")
	h.wantCode("commit retried after completion", h.end("tx", pid, epoch, true), errNone)
	h.wantCode("abort after commit", h.end("tx", pid, epoch, false), errInvalidTxnState)

	var states []int8
	for _, r := range h.log.Records(h.c.PartitionFor("tx")) {
		v, err := decodeTxnValue("tx", r.Value)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, int8(v.state))
	}
	want := []int8{0, 1, 2, 4}
	if len(states) != len(want) {
		t.Fatalf("records: states %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("records: states %v, want %v", states, want)
		}
	}

	// The next transaction starts from CompleteCommit.
	h.wantCode("next add", h.add("tx", pid, epoch, tp("c", 0)), errNone)
	h.wantCode("abort", h.end("tx", pid, epoch, false), errNone)
	h.settle()
	h.wantState("tx", "CompleteAbort")
	if calls := h.markers.calls(); len(calls) != 2 || calls[1].Commit {
		t.Fatalf("abort markers: %+v", calls)
	}
}

func TestInitProducerIDBumpsEpochAndFencesOlderInstance(t *testing.T) {
	h := newHarness(t)
	pid, e0 := h.mustInit("tx")
	pid2, e1 := h.mustInit("tx")
	if pid2 != pid || e1 != e0+1 {
		t.Fatalf("second InitProducerId: %d/%d, want %d/%d", pid2, e1, pid, e0+1)
	}
	h.wantCode("old instance adds", h.add("tx", pid, e0, tp("a", 0)), errProducerFenced)
	h.wantCode("old instance adds, v1", h.addV(1, "tx", pid, e0, tp("a", 0)), errInvalidProducerEpoch)
	h.wantCode("old instance ends, v1", h.endV(1, "tx", pid, e0, true), errInvalidProducerEpoch)
	h.wantCode("old instance ends, v2", h.endV(2, "tx", pid, e0, true), errProducerFenced)
	h.wantCode("wrong producer id", h.add("tx", pid+1, e1, tp("a", 0)), errInvalidProducerIDMapping)
	h.wantCode("unknown id", h.add("other", pid, e1, tp("a", 0)), errInvalidProducerIDMapping)
	h.wantCode("end of an empty transaction", h.end("tx", pid, e1, true), errInvalidTxnState)
}

func TestInitProducerIDValidatesTimeoutAndFields(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxTransactionTimeout = time.Minute })
	_, _, code := h.init("tx", 2*time.Minute)
	h.wantCode("timeout above the max", code, errInvalidTransactionTimeout)
	_, _, code = h.init("tx", 0)
	h.wantCode("zero timeout", code, errInvalidTransactionTimeout)
	_, _, code = h.init("", time.Second)
	h.wantCode("empty transactional id", code, errInvalidRequest)
	_, _, code = h.initV("tx", time.Second, 3, 5, -1)
	h.wantCode("producer id without epoch", code, errInvalidRequest)
	_, _, code = h.init("tx", time.Minute)
	h.wantCode("at the max", code, errNone)
}

func TestInitProducerIDDuringTransactionFencesAndAborts(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0)), errNone)

	_, _, code := h.init("tx", time.Minute)
	h.wantCode("InitProducerId during a transaction", code, errConcurrentTransactions)
	s := h.wantState("tx", "PrepareAbort")
	if s.ProducerEpoch != epoch+1 {
		t.Fatalf("fence: epoch %d, want %d", s.ProducerEpoch, epoch+1)
	}
	_, _, code = h.init("tx", time.Minute)
	h.wantCode("InitProducerId while aborting", code, errConcurrentTransactions)
	h.wantCode("old instance commits", h.end("tx", pid, epoch, true), errProducerFenced)

	h.settle()
	calls := h.markers.calls()
	if len(calls) != 1 || calls[0].Commit || calls[0].ProducerEpoch != epoch+1 {
		t.Fatalf("abort markers must carry the bumped epoch: %+v", calls)
	}
	h.wantState("tx", "CompleteAbort")
	pid2, e2, code := h.init("tx", time.Minute)
	h.wantCode("retried InitProducerId", code, errNone)
	if pid2 != pid || e2 != epoch+2 {
		t.Fatalf("after the fence: %d/%d, want %d/%d", pid2, e2, pid, epoch+2)
	}
}

func TestAddOffsetsToTxnAddsTheGroupPartition(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	req := addOffsetsRequest("tx", pid, epoch, 3)
	h.wantCode("AddOffsetsToTxn", h.c.AddOffsetsToTxn(t.Context(), req, 17).ErrorCode, errNone)
	s := h.wantState("tx", "Ongoing")
	if len(s.Topics) != 1 || s.Topics[0].Topic != "__consumer_offsets" || s.Topics[0].Partitions[0] != 17 {
		t.Fatalf("topics %+v", s.Topics)
	}
	old := addOffsetsRequest("tx", pid, epoch-1+1, 1)
	old.ProducerEpoch = 9
	h.wantCode("v1 fenced", h.c.AddOffsetsToTxn(t.Context(), old, 17).ErrorCode, errInvalidProducerEpoch)
}

func TestUnknownPartitionFailsTheWholeAdd(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TopicPartitionExists = func(topic string, _ int32) bool { return topic != "gone" }
	})
	pid, epoch := h.mustInit("tx")
	req := addRequestV3("tx", pid, epoch, tp("a", 0), tp("gone", 0))
	resp := h.c.AddPartitionsToTxn(t.Context(), req)
	got := map[string]int16{}
	for _, tt := range resp.Topics {
		got[tt.Topic] = tt.Partitions[0].ErrorCode
	}
	if got["a"] != errOperationNotAttempted || got["gone"] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("codes %v", got)
	}
	h.wantState("tx", "Empty")
}
