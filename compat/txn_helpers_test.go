package compat

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// txnProducer is a franz-go transactional producer with transactional.id id
// and a transaction timeout of timeout.
func txnProducer(t *testing.T, addr, id string, timeout time.Duration) *kgo.Client {
	t.Helper()
	return newClient(t, addr, kgo.TransactionalID(id), kgo.TransactionTimeout(timeout),
		kgo.RecordRetries(5), kgo.RequestTimeoutOverhead(10*time.Second))
}

// txnRecords are n records for partition 0 of topic, valued prefix-0...
func txnRecords(topic, prefix string, n int) []*kgo.Record {
	var out []*kgo.Record
	for i := range n {
		v := []byte(fmt.Sprintf("%s-%d", prefix, i))
		out = append(out, &kgo.Record{Topic: topic, Partition: 0, Key: v, Value: v})
	}
	return out
}

// runTxn writes recs in one transaction of cl and ends it with commit
// (kgo.TryCommit) or abort (kgo.TryAbort), failing the test on any error.
func runTxn(t *testing.T, cl *kgo.Client, end kgo.TransactionEndTry, recs ...*kgo.Record) {
	t.Helper()
	beginTxn(t, cl, recs...)
	ctx := testCtx(t, 30*time.Second)
	if end == kgo.TryAbort {
		// Aborting discards what is buffered; the records are already
		// acknowledged, so they are in the log.
		if err := cl.AbortBufferedRecords(ctx); err != nil {
			t.Fatalf("abort buffered records: %v", err)
		}
	}
	if err := cl.EndTransaction(ctx, end); err != nil {
		t.Fatalf("end transaction (commit=%v): %v", end, err)
	}
}

// beginTxn begins a transaction of cl and writes recs in it, acknowledged.
func beginTxn(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin transaction: %v", err)
	}
	if err := cl.ProduceSync(testCtx(t, 30*time.Second), recs...).FirstErr(); err != nil {
		t.Fatalf("produce in a transaction: %v", err)
	}
}

// producerID is cl's producer id, known once it has begun a transaction.
func producerID(t *testing.T, cl *kgo.Client) int64 {
	t.Helper()
	id, _, err := cl.ProducerID(testCtx(t, 30*time.Second))
	if err != nil {
		t.Fatalf("producer id: %v", err)
	}
	return id
}

// values are the records' values as strings.
func values(recs []*kgo.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, string(r.Value))
	}
	return out
}
