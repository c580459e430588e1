package txn

import (
	"testing"
	"time"
)

func TestTimedOutTransactionIsAbortedWithBumpedEpoch(t *testing.T) {
	h := newHarness(t)
	pid, epoch, code := h.init("tx", 30*time.Second)
	h.wantCode("init", code, errNone)
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0)), errNone)

	// The abort pass runs every 10 s; at 30 s the transaction is not yet
	// over its timeout (start + timeout < now is required).
	h.clock.Advance(30 * time.Second)
	h.wantState("tx", "Ongoing")
	h.clock.Advance(10 * time.Second)
	s := h.wantState("tx", "CompleteAbort")
	if s.ProducerEpoch != epoch+1 {
		t.Fatalf("epoch %d, want the bumped %d", s.ProducerEpoch, epoch+1)
	}
	calls := h.markers.calls()
	if len(calls) != 1 || calls[0].Commit || calls[0].ProducerEpoch != epoch+1 {
		t.Fatalf("markers %+v", calls)
	}
	// The timed-out producer is fenced.
	h.wantCode("commit of the timed-out producer", h.end("tx", pid, epoch, true), errProducerFenced)
	h.wantCode("add of the timed-out producer", h.add("tx", pid, epoch, tp("a", 0)), errProducerFenced)
}

func TestExpiredTransactionalIDsGetTombstones(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TransactionalIDExpiration = 2 * time.Hour
		c.RemoveExpiredInterval = time.Hour
	})
	idle, _ := h.mustInit("idle")
	h.clock.Advance(time.Hour)
	h.wantState("idle", "Empty")
	// The second pass finds "idle" unchanged for two hours.
	h.clock.Advance(time.Hour)
	if s := h.describe("idle"); s.ErrorCode != errTransactionalIDNotFound {
		t.Fatalf("idle id still there: %+v", s)
	}
	if v := h.log.lastValue(t, h.c.PartitionFor("idle"), "idle"); v != nil {
		t.Fatalf("no tombstone for the expired id: %+v", v)
	}
	h.restart()
	if s := h.describe("idle"); s.ErrorCode != errTransactionalIDNotFound {
		t.Fatalf("expired id back after reload: %+v", s)
	}
	// A new InitProducerId starts afresh with a new producer id.
	pid, epoch := h.mustInit("idle")
	if pid == idle || epoch != 0 {
		t.Fatalf("after expiry: %d/%d", pid, epoch)
	}
}

func TestOngoingTransactionDoesNotExpire(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.TransactionalIDExpiration = time.Hour
		c.RemoveExpiredInterval = time.Hour
		c.MaxTransactionTimeout = 24 * time.Hour
		c.AbortTimedOutInterval = 24 * time.Hour
	})
	pid, epoch, code := h.init("tx", 23*time.Hour)
	h.wantCode("init", code, errNone)
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0)), errNone)
	h.clock.Advance(3 * time.Hour)
	h.wantState("tx", "Ongoing")
}

func TestExpiryTombstoneFailureKeepsTheID(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TransactionalIDExpiration = time.Minute })
	h.mustInit("tx")
	h.clock.Advance(2 * time.Minute)
	h.log.setFail(errTransport)
	h.c.RemoveExpiredTransactionalIDs()
	h.wantState("tx", "Empty")
	h.log.setFail(nil)
	// Not stuck pending: requests go on.
	if _, _, code := h.init("tx", time.Minute); code != errNone {
		t.Fatalf("InitProducerId after a failed expiry: %d", code)
	}
}
