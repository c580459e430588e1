package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestRestartReplaysState(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0), tp("a", 1)), errNone)
	h.restart()
	s := h.wantState("tx", "Ongoing")
	if s.ProducerID != pid || s.ProducerEpoch != epoch || len(s.Topics) != 1 || len(s.Topics[0].Partitions) != 2 {
		t.Fatalf("after restart: %+v", s)
	}
	h.wantCode("commit after restart", h.end("tx", pid, epoch, true), errNone)
	h.settle()
	h.wantState("tx", "CompleteCommit")
}

func TestLoadResumesPrepareCommit(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0), tp("b", 0)), errNone)
	// The first broker writes PrepareCommit, then loses the partition
	// before any marker goes out.
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.restart()
	h.wantState("tx", "PrepareCommit")
	// Requests wait for the completion the load started.
	h.wantCode("retry while completing", h.end("tx", pid, epoch, true), errConcurrentTransactions)
	h.settle()
	calls := h.markers.calls()
	if len(calls) != 1 || !calls[0].Commit || calls[0].CoordinatorEpoch != h.epoch || len(calls[0].Partitions) != 2 {
		t.Fatalf("markers after load: %+v", calls)
	}
	h.wantState("tx", "CompleteCommit")
	h.wantCode("retry after completion", h.end("tx", pid, epoch, true), errNone)
}

func TestLoadResumesPrepareAbortOfAFence(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0)), errNone)
	_, _, code := h.init("tx", time.Minute)
	h.wantCode("fence", code, errConcurrentTransactions)
	h.restart()
	h.settle()
	calls := h.markers.calls()
	if len(calls) != 1 || calls[0].Commit || calls[0].ProducerEpoch != epoch+1 {
		t.Fatalf("abort markers after load: %+v", calls)
	}
	_, e, code := h.init("tx", time.Minute)
	h.wantCode("init after the abort", code, errNone)
	if e != epoch+2 {
		t.Fatalf("epoch %d, want %d", e, epoch+2)
	}
}

func TestLoadInProgressAndNotCoordinator(t *testing.T) {
	h := newHarness(t)
	p := h.c.PartitionFor("tx")
	h.c.UnloadPartition(p, h.epoch)
	_, _, code := h.init("tx", time.Minute)
	h.wantCode("unloaded partition", code, errNotCoordinator)

	// A replay that blocks shows COORDINATOR_LOAD_IN_PROGRESS meanwhile.
	release := make(chan struct{})
	started := make(chan struct{})
	blocking := &blockingReplayLog{MemLog: h.log, started: started, release: release}
	h.c.log = blocking
	done := make(chan error, 1)
	go func() { done <- h.c.LoadPartition(p, h.epoch+1) }()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("load did not start")
	}
	_, _, code = h.init("tx", time.Minute)
	h.wantCode("loading partition", code, errLoadInProgress)
	list := h.c.ListTransactions(listRequest(0))
	h.wantCode("ListTransactions while loading", list.ErrorCode, errLoadInProgress)
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("load did not finish")
	}
	_, _, code = h.init("tx", time.Minute)
	h.wantCode("loaded", code, errNone)
}

type blockingReplayLog struct {
	*MemLog
	started chan struct{}
	release chan struct{}
}

func (l *blockingReplayLog) Replay(p int32, fn func(k, v []byte) error) error {
	close(l.started)
	<-l.release
	return l.MemLog.Replay(p, fn)
}

func TestUnloadIgnoresOlderEpochAndOlderLoads(t *testing.T) {
	h := newHarness(t)
	p := h.c.PartitionFor("tx")
	if err := h.c.LoadPartition(p, h.epoch+1); err != nil {
		t.Fatal(err)
	}
	// A late unload of the previous epoch must not drop the new one.
	h.c.UnloadPartition(p, h.epoch)
	if err := h.c.LoadPartition(p, h.epoch); err != nil {
		t.Fatal(err)
	}
	if _, _, code := h.init("tx", time.Minute); code != errNone {
		t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(code))
	}
	if c := h.markers.calls(); len(c) != 0 {
		t.Fatal(c)
	}
	h.c.UnloadPartition(p, -1)
	_, _, code := h.init("tx", time.Minute)
	h.wantCode("after StopReplica-style unload", code, errNotCoordinator)
}

// An append checked under coordinator epoch 1 that is still in flight when
// epoch 2 loads must neither land after the replay nor change memory.
func TestStaleEpochAppendDoesNotWin(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	p := h.c.PartitionFor("tx")

	inAppend := make(chan struct{})
	release := make(chan struct{})
	h.log.mu.Lock()
	h.log.Block = func(int32) {
		close(inAppend)
		<-release
	}
	h.log.mu.Unlock()

	addDone := make(chan int16, 1)
	go func() { addDone <- h.add("tx", pid, epoch, tp("a", 0)) }()
	select {
	case <-inAppend:
	case <-time.After(5 * time.Second):
		t.Fatal("append did not start")
	}
	h.log.mu.Lock()
	h.log.Block = nil
	h.log.mu.Unlock()

	loadDone := make(chan error, 1)
	go func() { loadDone <- h.c.LoadPartition(p, h.epoch+1) }()
	// The load waits for the append; meanwhile the partition is loading.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, _, code := h.c.lookup("tx"); code == errLoadInProgress {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("load did not start")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-loadDone:
		t.Fatalf("load finished while an older append was in flight: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	select {
	case code := <-addDone:
		// The new epoch is loading: the client retries here.
		h.wantCode("add across a reload", code, errLoadInProgress)
	case <-time.After(5 * time.Second):
		t.Fatal("add did not return")
	}
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	// The record was in the log before the replay, so the new epoch sees
	// the partition added: log and memory agree.
	s := h.wantState("tx", "Ongoing")
	if len(s.Topics) != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestAppendFailureLeavesStateUnchanged(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	for _, c := range []struct {
		err  error
		want int16
	}{
		{kerr.NotEnoughReplicas, errCoordinatorNotAvailable},
		{kerr.RequestTimedOut, errCoordinatorNotAvailable},
		{kerr.NotLeaderForPartition, errNotCoordinator},
		{kerr.KafkaStorageError, errNotCoordinator},
		{kerr.MessageTooLarge, errUnknownServerError},
		{context.DeadlineExceeded, errCoordinatorNotAvailable},
	} {
		h.log.setFail(c.err)
		h.wantCode("add with "+c.err.Error(), h.add("tx", pid, epoch, tp("a", 0)), c.want)
		h.wantState("tx", "Empty")
	}
	h.log.setFail(nil)
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0)), errNone)
}

func TestFailedFenceDoesNotBumpTwice(t *testing.T) {
	h := newHarness(t)
	pid, epoch := h.mustInit("tx")
	h.wantCode("add", h.add("tx", pid, epoch, tp("a", 0)), errNone)
	h.log.setFail(kerr.NotEnoughReplicas)
	_, _, code := h.init("tx", time.Minute)
	h.wantCode("fence whose append fails", code, errCoordinatorNotAvailable)
	h.log.setFail(nil)
	_, _, code = h.init("tx", time.Minute)
	h.wantCode("fence again", code, errConcurrentTransactions)
	h.settle()
	if calls := h.markers.calls(); len(calls) != 1 || calls[0].ProducerEpoch != epoch+1 {
		t.Fatalf("the second fence must reuse the unreturned epoch: %+v", calls)
	}
}

func TestLoadAtTheSameEpochKeepsCompletionsGoing(t *testing.T) {
	h := newHarness(t)
	pid, epoch := openTxn(h, "tx", tp("a", 0))
	h.markers.failNext(map[TopicPartition]error{tp("a", 0): kerr.NotLeaderForPartition})
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.settle()
	// A repeated LeaderAndIsr with the same leader epoch changes nothing.
	if err := h.c.LoadPartition(h.c.PartitionFor("tx"), h.epoch); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	if n := len(h.markers.calls()); n != 2 {
		t.Fatalf("%d marker calls, want the retry only", n)
	}
	h.wantState("tx", "CompleteCommit")
}
