package txn

import (
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestKIP360Reinitialisation(t *testing.T) {
	h := newHarness(t)
	pid, e0 := h.mustInit("tx")

	// The producer resumes after an error with its id and epoch: bumped,
	// and the old epoch is remembered for a retry.
	p1, e1, code := h.initV("tx", time.Minute, 4, pid, e0)
	h.wantCode("resume", code, errNone)
	if p1 != pid || e1 != e0+1 {
		t.Fatalf("resume: %d/%d", p1, e1)
	}
	// The same request again (its answer was lost) gets the same answer.
	p2, e2, code := h.initV("tx", time.Minute, 4, pid, e0)
	h.wantCode("retry of the resume", code, errNone)
	if p2 != pid || e2 != e1 {
		t.Fatalf("retry: %d/%d, want %d/%d", p2, e2, pid, e1)
	}
	// A new instance (no id, no epoch) bumps and forgets the last epoch, so
	// the older instance's retry is now fenced.
	_, e3, code := h.init("tx", time.Minute)
	h.wantCode("new instance", code, errNone)
	if e3 != e1+1 {
		t.Fatalf("new instance epoch %d", e3)
	}
	_, _, code = h.initV("tx", time.Minute, 4, pid, e1)
	h.wantCode("fenced instance resumes", code, errProducerFenced)
	_, _, code = h.initV("tx", time.Minute, 3, pid, e1)
	h.wantCode("fenced instance resumes, v3", code, errInvalidProducerEpoch)
	_, _, code = h.initV("tx", time.Minute, 4, pid+7, e3)
	h.wantCode("unknown producer id", code, errProducerFenced)
}

func TestKIP360NewMetadataAcceptsAnyProducer(t *testing.T) {
	h := newHarness(t)
	// A producer that recovers from UNKNOWN_PRODUCER_ID on a coordinator
	// that has never seen the id gets the new producer id.
	pid, epoch, code := h.initV("tx", time.Minute, 4, 42, 7)
	h.wantCode("init", code, errNone)
	if pid != 1000 || epoch != 0 {
		t.Fatalf("%d/%d", pid, epoch)
	}
}

// setEpoch moves tx's epoch, as many InitProducerId calls would.
func setEpoch(h *harness, id string, epoch int16) {
	m, _, _ := h.c.lookup(id)
	m.mu.Lock()
	m.producerEpoch = epoch
	m.mu.Unlock()
}

func TestEpochExhaustionRotatesProducerID(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	setEpoch(h, "tx", math.MaxInt16-2)
	_, e, code := h.init("tx", time.Minute)
	h.wantCode("bump to the last epoch", code, errNone)
	if e != math.MaxInt16-1 {
		t.Fatalf("epoch %d", e)
	}
	// No epoch is left: a new producer id at epoch 0.
	p2, e2, code := h.initV("tx", time.Minute, 4, pid, e)
	h.wantCode("rotate", code, errNone)
	if p2 == pid || e2 != 0 {
		t.Fatalf("rotation: %d/%d", p2, e2)
	}
	// The retry of that request (old id, exhausted epoch) gets the same.
	p3, e3, code := h.initV("tx", time.Minute, 4, pid, e)
	h.wantCode("retry of the rotation", code, errNone)
	if p3 != p2 || e3 != 0 {
		t.Fatalf("retry of the rotation: %d/%d, want %d/0", p3, e3, p2)
	}
}

func TestFenceAtLastEpochThenRotate(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	setEpoch(h, "tx", math.MaxInt16-1)
	h.wantCode("add", h.add("tx", pid, math.MaxInt16-1, tp("a", 0)), errNone)
	// The fence uses the one epoch clients never get.
	_, _, code := h.init("tx", time.Minute)
	h.wantCode("fence", code, errConcurrentTransactions)
	h.settle()
	if calls := h.markers.calls(); len(calls) != 1 || calls[0].ProducerEpoch != math.MaxInt16 {
		t.Fatalf("fence markers %+v", calls)
	}
	p2, e2, code := h.init("tx", time.Minute)
	h.wantCode("after the fence", code, errNone)
	if p2 == pid || e2 != 0 {
		t.Fatalf("%d/%d", p2, e2)
	}
}

func TestIdempotentInitProducerIDHandsOutFreshIDs(t *testing.T) {
	h := newHarness(t)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	a := h.c.InitProducerID(t.Context(), req)
	b := h.c.InitProducerID(t.Context(), req)
	if a.ErrorCode != 0 || b.ErrorCode != 0 || a.ProducerID == b.ProducerID || a.ProducerEpoch != 0 {
		t.Fatalf("%+v %+v", a, b)
	}
}
