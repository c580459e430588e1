package compat

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// restartTxnTimeout is the abandoned transaction's transaction.timeout.ms:
// long enough that the test sees its partition held at the open
// transaction's first offset, kills the broker and has it back before the
// timeout, short enough that the restarted coordinator aborts it soon. (A
// restarted Apache Kafka node that aborts the transaction in its first
// seconds, while it still leads at the previous epoch, loses the
// PrepareAbort with that leadership and never aborts it again: the abort
// must fall after start-up, which takes Kafka up to some 15 s here.)
const restartTxnTimeout = 20 * time.Second

// partitionOffsets are partition 0's ListOffsets answers: the last stable
// offset (read_committed) and the high watermark (read_uncommitted).
func partitionOffsets(t *testing.T, adm *kadm.Client, topic string) (lso, hwm int64, err error) {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	committed, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	end, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	c, ok1 := committed.Lookup(topic, 0)
	e, ok2 := end.Lookup(topic, 0)
	if !ok1 || !ok2 || c.Err != nil || e.Err != nil {
		return 0, 0, fmt.Errorf("ListOffsets %s[0]: read_committed %+v, read_uncommitted %+v", topic, c, e)
	}
	return c.Offset, e.Offset, nil
}

// waitOffsets waits (bounded) until partition 0 of topic has last stable
// offset lso and high watermark hwm. A commit or abort returns to the
// producer before its markers are written: a test that needs a marker at
// its offset before the next producer writes waits for it here.
func waitOffsets(t *testing.T, adm *kadm.Client, topic string, lso, hwm int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		gotLSO, gotHWM, err := partitionOffsets(t, adm, topic)
		if err == nil && gotLSO == lso && gotHWM == hwm {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s[0]: last stable offset %d, high watermark %d (err %v); want %d and %d", topic, gotLSO, gotHWM, err, lso, hwm)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTxnAbortedAfterRestart: a transaction is left open (its producer
// abandoned) and the broker is SIGKILLed and restarted; the coordinator,
// reloading __transaction_state, aborts it once transaction.timeout.ms has
// passed; the last stable offset then reaches the log end and a
// read_committed consumer reads past it, the committed records only.
func TestTxnAbortedAfterRestart(t *testing.T) {
	b := harness.StartBroker(t, "transaction.abort.timed.out.transaction.cleanup.interval.ms=500")
	const topic = "txn-restart"
	createTopic(t, b.Addr, topic, 1, nil)
	adm := newAdmin(t, b.Addr)

	committer := txnProducer(t, b.Addr, "restart-committer", time.Minute)
	runTxn(t, committer, kgo.TryCommit, txnRecords(topic, "a", 3)...) // offsets 0-2, marker 3
	waitOffsets(t, adm, topic, 4, 4)

	// The abandoned transaction: opened, written to, never ended.
	open := txnProducer(t, b.Addr, "restart-open", restartTxnTimeout)
	opened := time.Now()
	beginTxn(t, open, txnRecords(topic, "b", 3)...) // offsets 4-6

	runTxn(t, committer, kgo.TryCommit, txnRecords(topic, "c", 3)...) // offsets 7-9, marker 10
	// The open transaction at offset 4 holds the last stable offset there.
	waitOffsets(t, adm, topic, 4, 11)

	b.Kill()
	if since := time.Since(opened); since >= restartTxnTimeout {
		t.Fatalf("the broker was killed %v after the transaction began, not within its timeout %v: the test proves nothing", since, restartTxnTimeout)
	}
	open.Close()
	b.Restart(t)

	// The abort writes a marker at offset 11; only then may the last
	// stable offset pass the aborted records.
	deadline := time.Now().Add(restartTxnTimeout + 30*time.Second)
	for {
		lso, hwm, err := partitionOffsets(t, adm, topic)
		if err == nil && lso == 12 && hwm == 12 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart: last stable offset %d, high watermark %d (err %v); want both 12 once the open transaction is aborted", lso, hwm, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if got := tool(t, "kafka-get-offsets", "--bootstrap-server", b.Addr, "--topic", topic); strings.TrimSpace(got) != topic+":0:12" {
		t.Errorf("kafka-get-offsets = %q, want %s:0:12", got, topic)
	}

	runTxn(t, committer, kgo.TryCommit, txnRecords(topic, "d", 3)...) // offsets 12-14, marker 15
	got := values(consumeN(t, b.Addr, topic, 9, 30*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted())))
	var want []string
	for _, prefix := range []string{"a", "c", "d"} {
		want = append(want, values(txnRecords(topic, prefix, 3))...)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read_committed after restart read %v, want %v", got, want)
	}
}
