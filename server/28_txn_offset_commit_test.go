package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/server/group"
)

// The kgo client sends every request at the highest version both sides
// know: TxnOffsetCommit v3, FindCoordinator v4+ and OffsetFetch v8+.

// awaitCoordinator asks FindCoordinator until the group's coordinator has
// loaded its __consumer_offsets partition.
func awaitCoordinator(t *testing.T, cl *kgo.Client, group string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKeys = []string{group}
		fc := request[*kmsg.FindCoordinatorResponse](t, cl, req)
		if len(fc.Coordinators) == 1 && fc.Coordinators[0].ErrorCode == 0 {
			if _, code := fetchStable(t, cl, group); code != kerr.CoordinatorLoadInProgress.Code && code != kerr.NotCoordinator.Code {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("coordinator for %s not ready within 10s", group)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func txnOffsetCommit(t *testing.T, cl *kgo.Client, group string, producerID int64, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "tx", group, producerID, 2
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = []kmsg.TxnOffsetCommitRequestTopicPartition{rp}
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
	return request[*kmsg.TxnOffsetCommitResponse](t, cl, req).Topics[0].Partitions[0].ErrorCode
}

// fetchStable fetches t-0 with requireStable; a group error is returned
// as the code.
func fetchStable(t *testing.T, cl *kgo.Client, group string) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.RequireStable = true
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = "t", []int32{0}
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{rt}
	req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	g := request[*kmsg.OffsetFetchResponse](t, cl, req).Groups[0]
	if g.ErrorCode != 0 {
		return -1, g.ErrorCode
	}
	p := g.Topics[0].Partitions[0]
	return p.Offset, p.ErrorCode
}

// writeMarker appends a transaction marker to __consumer_offsets-0 as the
// WriteTxnMarkers handler does, then reports it to the coordinator.
func writeMarker(t *testing.T, b *Broker, producerID int64, commit bool) {
	t.Helper()
	p := b.offsetsPartition(0)
	if p == nil {
		t.Fatal("not the leader of __consumer_offsets-0")
	}
	if _, err := p.AppendMarkerAsLeader(logstore.Marker{ProducerID: producerID, ProducerEpoch: 2, Commit: commit}, -1); err != nil {
		t.Fatalf("append marker: %v", err)
	}
	b.groups.CompleteTransaction(0, producerID, commit)
}

// TestTxnOffsetCommitThroughTheLog commits offsets transactionally through
// a broker, checks the batch Kafka's way (transactional, the producer's id
// and epoch, base sequence 0), ends the transactions with markers and
// restarts: the replay must read the markers to the same state.
func TestTxnOffsetCommitThroughTheLog(t *testing.T) {
	dir := t.TempDir()
	// No transaction coordinator takes part: the offsets are committed
	// without asking it (transaction.partition.verification.enable=false).
	db := startDataBroker(t, dir, "transaction.partition.verification.enable", "false")
	db.mustCreate(t, "t", 1, nil)
	cl := db.client(t)
	awaitCoordinator(t, cl, "committed")

	if code := txnOffsetCommit(t, cl, "committed", 1000, 42); code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	p := db.b.offsetsPartition(0)
	res, _, err := p.Read(p.LogStartOffset(), 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	data, err := res.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	batches, err := logstore.ParseBatches(data)
	if err != nil {
		t.Fatal(err)
	}
	last := batches[len(batches)-1].Header
	if !last.IsTransactional() || last.IsControl() || last.ProducerID != 1000 || last.ProducerEpoch != 2 || last.BaseSequence != 0 {
		t.Fatalf("TxnOffsetCommit batch header %+v", last)
	}
	if off, code := fetchStable(t, cl, "committed"); code != kerr.UnstableOffsetCommit.Code || off != -1 {
		t.Fatalf("open transaction: offset %d %v", off, kerr.ErrorForCode(code))
	}
	writeMarker(t, db.b, 1000, true)
	if off, code := fetchStable(t, cl, "committed"); code != 0 || off != 42 {
		t.Fatalf("after commit: offset %d %v", off, kerr.ErrorForCode(code))
	}

	if code := txnOffsetCommit(t, cl, "aborted", 1001, 7); code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}
	writeMarker(t, db.b, 1001, false)
	if code := txnOffsetCommit(t, cl, "open", 1002, 9); code != 0 {
		t.Fatalf("TxnOffsetCommit: %v", kerr.ErrorForCode(code))
	}

	db.stop()
	db = startDataBroker(t, dir, "transaction.partition.verification.enable", "false")
	cl = db.client(t)
	awaitCoordinator(t, cl, "committed")
	for _, tc := range []struct {
		group  string
		offset int64
		code   int16
	}{
		{"committed", 42, 0},
		{"aborted", -1, 0},
		{"open", -1, kerr.UnstableOffsetCommit.Code},
	} {
		if off, code := fetchStable(t, cl, tc.group); off != tc.offset || code != tc.code {
			t.Fatalf("%s after restart: offset %d %v, want %d %v", tc.group, off, kerr.ErrorForCode(code), tc.offset, kerr.ErrorForCode(tc.code))
		}
	}
	writeMarker(t, db.b, 1002, true)
	if off, code := fetchStable(t, cl, "open"); code != 0 || off != 9 {
		t.Fatalf("open transaction committed after restart: offset %d %v", off, kerr.ErrorForCode(code))
	}
}

// A TxnOffsetCommit whose transaction ended while the transaction
// coordinator was confirming it (KIP-890) must not reach the log: appended
// after the abort marker, it would open a new transaction of the producer
// in __consumer_offsets, and the producer's next commit marker would make
// the aborted transaction's offsets committed. The append carries the
// guard taken before the confirmation; the marker withdraws it.
func TestTxnOffsetCommitAfterItsTransactionEndedIsRefused(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	db.mustCreate(t, "t", 1, nil)
	cl := db.client(t)
	awaitCoordinator(t, cl, "g")
	p := db.b.offsetsPartition(0)
	if p == nil {
		t.Fatal("not the leader of __consumer_offsets-0")
	}
	log := offsetsLog{db.b}
	ctx := context.Background()
	records := []group.KV{{Key: []byte("\x00\x01k"), Value: []byte("v")}}
	const pid = 3000

	stale := group.VerificationGuard(verifiedGuard(t, p, pid))
	writeMarker(t, db.b, pid, false)
	if _, err := log.AppendTransactional(ctx, 0, pid, 2, stale, records); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("commit appended after its transaction's marker: err %v, want INVALID_TXN_STATE", err)
	}
	if _, err := log.AppendTransactional(ctx, 0, pid, 2, 0, records); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("commit with no guard opening a transaction: err %v, want INVALID_TXN_STATE", err)
	}

	// A guard still in force opens the transaction; later commits of the
	// same transaction need none.
	fresh := group.VerificationGuard(verifiedGuard(t, p, pid))
	if _, err := log.AppendTransactional(ctx, 0, pid, 2, fresh, records); err != nil {
		t.Fatalf("commit with its guard: %v", err)
	}
	if _, err := log.AppendTransactional(ctx, 0, pid, 2, 0, records); err != nil {
		t.Fatalf("second commit of the open transaction: %v", err)
	}
}
