package fetcher

import (
	"testing"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// A broker that led in epoch 116 without appending anything has an empty
// epoch-116 entry at its log end; following the new leader (which never
// had epoch 116) it must name 115, the epoch of its last batch, or the
// leader's diverging answer (115 ending at this log end) would never
// change anything and the replica would never catch up.
func TestLastFetchedEpochSkipsEmptyEpochs(t *testing.T) {
	entries := []logstore.EpochEntry{{Epoch: 110, StartOffset: 0}, {Epoch: 115, StartOffset: 40}, {Epoch: 116, StartOffset: 90}}
	if got := lastFetchedEpoch(entries, 90); got != 115 {
		t.Fatalf("LEO 90: last fetched epoch %d, want 115", got)
	}
	if got := lastFetchedEpoch(entries, 91); got != 116 {
		t.Fatalf("LEO 91: last fetched epoch %d, want 116", got)
	}
	if got := lastFetchedEpoch(entries[:1], 0); got != replica.UndefinedEpoch {
		t.Fatalf("empty log: %d", got)
	}
}
