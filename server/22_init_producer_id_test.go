package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestInitProducerIDNeverRepeats(t *testing.T) {
	dir := t.TempDir()
	seen := map[int64]bool{}
	for round := 0; round < 2; round++ {
		db := startDataBroker(t, dir)
		cl := db.client(t)
		for i := 0; i < 5; i++ {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.ProducerID, req.ProducerEpoch = 7, 3 // KIP-360 re-init: still a fresh id
			r := request[*kmsg.InitProducerIDResponse](t, cl, req)
			if r.ErrorCode != 0 || r.ProducerEpoch != 0 || seen[r.ProducerID] {
				t.Fatalf("round %d: %s id %d epoch %d (seen before: %v)", round, errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch, seen[r.ProducerID])
			}
			seen[r.ProducerID] = true
		}
		db.stop()
	}
	// A transactional id's producer id comes from the same blocks, and a
	// second InitProducerId keeps the id and bumps the epoch.
	db := startDataBroker(t, dir)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKeys, fc.CoordinatorType = []string{"txn"}, 1
	if r := request[*kmsg.FindCoordinatorResponse](t, db.client(t), fc); len(r.Coordinators) != 1 || r.Coordinators[0].ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %+v", r.Coordinators)
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = strp("txn")
	req.TransactionTimeoutMillis = 60000
	var first *kmsg.InitProducerIDResponse
	deadline := time.Now().Add(10 * time.Second)
	for {
		first = request[*kmsg.InitProducerIDResponse](t, db.client(t), req)
		// The coordinator answers once it has loaded its partition.
		if first.ErrorCode != kerr.CoordinatorLoadInProgress.Code && first.ErrorCode != kerr.NotCoordinator.Code || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if first.ErrorCode != 0 || first.ProducerEpoch != 0 || seen[first.ProducerID] {
		t.Fatalf("transactional id: %s id %d epoch %d (seen before: %v)", errName(first.ErrorCode), first.ProducerID, first.ProducerEpoch, seen[first.ProducerID])
	}
	second := request[*kmsg.InitProducerIDResponse](t, db.client(t), req)
	if second.ErrorCode != 0 || second.ProducerID != first.ProducerID || second.ProducerEpoch != 1 {
		t.Fatalf("second InitProducerId: %s id %d epoch %d, want id %d epoch 1", errName(second.ErrorCode), second.ProducerID, second.ProducerEpoch, first.ProducerID)
	}
}
