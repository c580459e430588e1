package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestVerifyOnlyAddPartitions(t *testing.T) {
	h := newHarness(t)
	pid, epoch := openTxn(h, "tx", tp("a", 0))
	other, oEpoch := h.mustInit("other")

	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	verify := func(id string, pid int64, epoch int16, tps ...TopicPartition) kmsg.AddPartitionsToTxnRequestTransaction {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, true
		for _, tp := range tps {
			tx.Topics = append(tx.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
		return tx
	}
	req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{
		verify("tx", pid, epoch, tp("a", 0), tp("b", 0)),
		verify("tx2", pid, epoch, tp("a", 0)),
		verify("other", other, oEpoch+1, tp("a", 0)),
	}
	add := kmsg.NewAddPartitionsToTxnRequestTransaction()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = "other", other, oEpoch
	add.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "z", Partitions: []int32{3}}}
	req.Transactions = append(req.Transactions, add)

	resp := h.c.AddPartitionsToTxn(context.Background(), req)
	if resp.Version != 4 || len(resp.Transactions) != 4 {
		t.Fatalf("%+v", resp)
	}
	codes := func(i int) map[TopicPartition]int16 {
		out := map[TopicPartition]int16{}
		for _, tt := range resp.Transactions[i].Topics {
			for _, p := range tt.Partitions {
				out[tp(tt.Topic, p.Partition)] = p.ErrorCode
			}
		}
		return out
	}
	if c := codes(0); c[tp("a", 0)] != errNone || c[tp("b", 0)] != errTransactionAbortable {
		t.Fatalf("verify tx: %v", c)
	}
	if c := codes(1); c[tp("a", 0)] != errInvalidProducerIDMapping {
		t.Fatalf("verify unknown id: %v", c)
	}
	if c := codes(2); c[tp("a", 0)] != errProducerFenced {
		t.Fatalf("verify wrong epoch: %v", c)
	}
	if c := codes(3); c[tp("z", 3)] != errNone {
		t.Fatalf("add in a v4 batch: %v", c)
	}
	h.wantState("other", "Ongoing")
	// Verification changes nothing.
	s := h.wantState("tx", "Ongoing")
	if len(s.Topics) != 1 {
		t.Fatalf("%+v", s.Topics)
	}
}

func TestDescribeAndListTransactions(t *testing.T) {
	h := newHarness(t)
	pa, ea := openTxn(h, "a", tp("t", 0), tp("t", 2), tp("u", 1))
	pb, _ := h.mustInit("b")
	s := h.wantState("a", "Ongoing")
	if s.ProducerID != pa || s.ProducerEpoch != ea || s.TimeoutMillis != 60000 || s.StartTimestamp != t0.UnixMilli() ||
		len(s.Topics) != 2 || s.Topics[0].Topic != "t" || len(s.Topics[0].Partitions) != 2 {
		t.Fatalf("describe: %+v", s)
	}
	if s := h.describe("missing"); s.ErrorCode != errTransactionalIDNotFound {
		t.Fatalf("missing: %+v", s)
	}
	if s := h.describe(""); s.ErrorCode != errInvalidRequest {
		t.Fatalf("empty id: %+v", s)
	}

	list := h.c.ListTransactions(listRequest(0))
	if list.ErrorCode != 0 || len(list.TransactionStates) != 2 {
		t.Fatalf("list: %+v", list)
	}
	list = h.c.ListTransactions(listRequest(0, "Ongoing", "Nonsense"))
	if len(list.TransactionStates) != 1 || list.TransactionStates[0].TransactionalID != "a" ||
		list.TransactionStates[0].TransactionState != "Ongoing" || len(list.UnknownStateFilters) != 1 {
		t.Fatalf("state filter: %+v", list)
	}
	req := listRequest(0)
	req.ProducerIDFilters = []int64{pb}
	if list = h.c.ListTransactions(req); len(list.TransactionStates) != 1 || list.TransactionStates[0].TransactionalID != "b" {
		t.Fatalf("producer filter: %+v", list)
	}

	// v1: only transactions running longer than the duration (KIP-994).
	h.clock.Advance(5 * time.Second)
	req = listRequest(1, "Ongoing")
	req.DurationFilterMillis = 10_000
	if list = h.c.ListTransactions(req); len(list.TransactionStates) != 0 {
		t.Fatalf("duration filter: %+v", list)
	}
	req.DurationFilterMillis = 1_000
	if list = h.c.ListTransactions(req); len(list.TransactionStates) != 1 {
		t.Fatalf("duration filter: %+v", list)
	}
	// v0 ignores the field.
	req.Version = 0
	req.DurationFilterMillis = 10_000
	if list = h.c.ListTransactions(req); len(list.TransactionStates) != 1 {
		t.Fatalf("v0 with a duration: %+v", list)
	}

	// v2: a pattern the whole id matches.
	req = listRequest(2)
	pat := "a|c"
	req.TransactionalIDPattern = &pat
	if list = h.c.ListTransactions(req); len(list.TransactionStates) != 1 || list.TransactionStates[0].TransactionalID != "a" {
		t.Fatalf("pattern: %+v", list)
	}
	bad := "("
	req.TransactionalIDPattern = &bad
	if list = h.c.ListTransactions(req); list.ErrorCode == 0 {
		t.Fatalf("bad pattern accepted: %+v", list)
	}
}
