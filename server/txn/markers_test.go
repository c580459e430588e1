package txn

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func openTxn(h *harness, id string, tps ...TopicPartition) (int64, int16) {
	h.t.Helper()
	pid, epoch := h.mustInit(id)
	h.wantCode("add", h.add(id, pid, epoch, tps...), errNone)
	return pid, epoch
}

func TestMarkerErrorsRetryOrDrop(t *testing.T) {
	a, b, c, d := tp("a", 0), tp("b", 0), tp("c", 0), tp("d", 0)
	h := newHarness(t)
	pid, epoch := openTxn(h, "tx", a, b, c, d)
	h.markers.failNext(map[TopicPartition]error{
		a: errTransport,                     // no answer: resend
		b: kerr.NotLeaderForPartition,       // leader moved: resend
		c: kerr.UnsupportedForMessageFormat, // the producer could not write there: drop
		// d written
	}, map[TopicPartition]error{
		a: kerr.LeaderNotAvailable, // waits for a leader
	})
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.settle()
	if n := len(h.markers.calls()); n != 1 {
		t.Fatalf("%d calls", n)
	}
	s := h.wantState("tx", "PrepareCommit")
	if len(s.Topics) != 2 || s.Topics[0].Topic != "a" || s.Topics[1].Topic != "b" {
		t.Fatalf("partitions still waiting for markers: %+v", s.Topics)
	}
	// The retry waits for the backoff.
	h.settle()
	if n := len(h.markers.calls()); n != 1 {
		t.Fatalf("%d calls before the backoff", n)
	}
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	calls := h.markers.calls()
	if len(calls) != 2 || len(calls[1].Partitions) != 2 {
		t.Fatalf("retry: %+v", calls)
	}
	if u, _ := h.c.markerQueueSizes(); u != 1 {
		t.Fatalf("UnknownDestinationQueueSize %d, want 1", u)
	}
	// The backoff doubles.
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	if n := len(h.markers.calls()); n != 2 {
		t.Fatalf("%d calls before the doubled backoff", n)
	}
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	calls = h.markers.calls()
	if len(calls) != 3 || len(calls[2].Partitions) != 1 || calls[2].Partitions[0] != a {
		t.Fatalf("second retry: %+v", calls)
	}
	h.wantState("tx", "CompleteCommit")
	if u, r := h.c.markerQueueSizes(); u != 0 || r != 0 {
		t.Fatalf("queues %d/%d after completion", u, r)
	}
}

func TestMarkersOfDeletedPartitionsAreDropped(t *testing.T) {
	deleted := false
	h := newHarness(t, func(c *Config) {
		c.TopicPartitionExists = func(topic string, _ int32) bool { return !(deleted && topic == "gone") }
	})
	pid, epoch := openTxn(h, "tx", tp("a", 0), tp("gone", 0))
	h.markers.failNext(map[TopicPartition]error{tp("gone", 0): kerr.UnknownTopicOrPartition})
	h.wantCode("abort", h.end("tx", pid, epoch, false), errNone)
	h.settle()
	h.wantState("tx", "PrepareAbort")
	deleted = true // the topic is deleted before the retry
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	if n := len(h.markers.calls()); n != 1 {
		t.Fatalf("a deleted partition was retried: %+v", h.markers.calls())
	}
	h.wantState("tx", "CompleteAbort")
}

func TestFencedMarkerStopsTheCompletion(t *testing.T) {
	h := newHarness(t)
	pid, epoch := openTxn(h, "tx", tp("a", 0))
	h.markers.failNext(map[TopicPartition]error{tp("a", 0): kerr.TransactionCoordinatorFenced})
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.settle()
	h.clock.Advance(time.Minute)
	if n := len(h.markers.calls()); n != 1 {
		t.Fatalf("%d calls after a fenced marker", n)
	}
	// A newer coordinator owns the transaction; this one stays put.
	h.wantState("tx", "PrepareCommit")
}

func TestCompletionAppendIsRetried(t *testing.T) {
	h := newHarness(t)
	pid, epoch := openTxn(h, "tx", tp("a", 0))
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.log.setFail(kerr.NotEnoughReplicas)
	h.settle()
	h.wantState("tx", "PrepareCommit")
	if _, r := h.c.markerQueueSizes(); r != 1 {
		t.Fatalf("LogAppendRetryQueueSize %d, want 1", r)
	}
	h.wantCode("retry while the completion waits", h.end("tx", pid, epoch, true), errConcurrentTransactions)
	h.log.setFail(nil)
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	h.wantState("tx", "CompleteCommit")
	if n := len(h.markers.calls()); n != 1 {
		t.Fatalf("markers were resent for a completion retry: %d calls", n)
	}
}

func TestUnloadStopsMarkerRetries(t *testing.T) {
	h := newHarness(t)
	pid, epoch := openTxn(h, "tx", tp("a", 0))
	h.markers.failNext(map[TopicPartition]error{tp("a", 0): kerr.NotLeaderForPartition})
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.settle()
	h.c.UnloadPartition(h.c.PartitionFor("tx"), h.epoch)
	h.clock.Advance(time.Minute)
	if n := len(h.markers.calls()); n != 1 {
		t.Fatalf("%d marker calls after unload", n)
	}
}

func TestMarkerOutcome(t *testing.T) {
	for _, c := range []struct {
		err  error
		want markerResult
	}{
		{nil, markerWritten},
		{errTransport, markerRetry},
		{kerr.UnknownTopicOrPartition, markerRetry},
		{kerr.NotLeaderForPartition, markerRetry},
		{kerr.NotEnoughReplicas, markerRetry},
		{kerr.NotEnoughReplicasAfterAppend, markerRetry},
		{kerr.RequestTimedOut, markerRetry},
		{kerr.KafkaStorageError, markerRetry},
		{kerr.LeaderNotAvailable, markerRetryNoLeader},
		{kerr.InvalidProducerEpoch, markerFenced},
		{kerr.TransactionCoordinatorFenced, markerFenced},
		{kerr.UnsupportedForMessageFormat, markerSkip},
		{kerr.UnsupportedVersion, markerSkip},
		{kerr.CorruptMessage, markerUnexpected},
		{kerr.MessageTooLarge, markerUnexpected},
	} {
		if got := markerOutcome(c.err); got != c.want {
			t.Errorf("%v: %v, want %v", c.err, got, c.want)
		}
	}
}
