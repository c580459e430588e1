package server

import (
	"testing"

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
	db := startDataBroker(t, dir)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = strp("txn")
	if r := request[*kmsg.InitProducerIDResponse](t, db.client(t), req); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("transactional id: %s", errName(r.ErrorCode))
	}
}
