package fetcher

import (
	"testing"
	"time"

	"github.com/kbroker/kbroker/replica"
)

// Followed lists a partition once it fetches, with its leader, and not
// after it is removed.
func TestFollowedListsFetchingPartitions(t *testing.T) {
	leaderLog := memLogOf(t, recs(0, "a", "b")...)
	h, _, _ := followFromEmpty(t, "followed", leaderLog, 3)
	want := Followed{TopicPartition: replica.TopicPartition{Topic: "followed", Partition: 0}, Leader: BrokerEndpoint{ID: 1, Addr: "l1"}}
	waitFor(t, 5*time.Second, "the partition listed", func() bool {
		got := h.m.Followed()
		return len(got) == 1 && got[0] == want
	})
	h.m.RemovePartitions(want.TopicPartition)
	if got := h.m.Followed(); len(got) != 0 {
		t.Fatalf("listed after removal: %+v", got)
	}
}
