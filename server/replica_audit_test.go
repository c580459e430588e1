package server

import (
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica/audit"
)

// The replica audit's fetch of a leader (a sessionless read_uncommitted
// consumer fetch, replica id -1, or -2 from the CLI) reads to the HW and
// leaves the leader's view of its followers alone: follower 2's progress,
// the ISR and the HW are what follower 2's own last fetch made them, and
// no fetch session is opened.
func TestAuditFetchLeavesFollowerStateAlone(t *testing.T) {
	b := newClusterBroker(t)
	handle[*kmsg.LeaderAndISRResponse](t, b, leaderAndIsr(3, leaderTopicID, laiState(1, 1, 5)))
	handle[*kmsg.UpdateMetadataResponse](t, b, updateMetadata(3, leaderTopicID, umState(1, 1, 5)))
	produceTwo(t, b)
	f := replica2Fetch(12, 2, 5)
	f.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
	handle[*kmsg.FetchResponse](t, b, f) // follower 2 at 2: HW 2
	produceTwo(t, b)                     // LEO 4, HW still 2

	p := b.replicas.Get("t", 1)
	before, ok := p.Follower(2)
	if !ok {
		t.Fatal("no progress of follower 2")
	}
	isr, hw := p.Isr(), p.HighWatermark()
	sessions := b.data.sessions.len()

	for _, id := range []int32{-1, -2} {
		for _, version := range []int16{12, 16} {
			req := audit.FetchRequest("t", 1, leaderTopicID, 0, 5, 1<<20, version, id)
			got := handle[*kmsg.FetchResponse](t, b, req).Topics[0].Partitions[0]
			if got.ErrorCode != 0 || got.HighWatermark != 2 || fetchedEnd(t, got.RecordBatches, 0) != 2 {
				t.Fatalf("replica id %d v%d: error %d, HW %d, read to %d; want 0, 2, 2", id, version, got.ErrorCode, got.HighWatermark, fetchedEnd(t, got.RecordBatches, 0))
			}
		}
	}
	after, _ := p.Follower(2)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("follower 2's progress moved: %+v, was %+v", after, before)
	}
	if !slices.Equal(p.Isr(), isr) || p.HighWatermark() != hw {
		t.Fatalf("ISR %v HW %d, were %v %d", p.Isr(), p.HighWatermark(), isr, hw)
	}
	if n := b.data.sessions.len(); n != sessions {
		t.Fatalf("fetch sessions %d, were %d", n, sessions)
	}
}
