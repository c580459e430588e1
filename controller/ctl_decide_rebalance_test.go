package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ElectLeaders sorted out: unknown, being deleted and not needed are
// answered at once; the rest are candidates, and their failures become
// the codes Kafka reports for the election type.
func TestDecideElectLeaders(t *testing.T) {
	atPref, displaced, leaderless, nostate, doomed := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1},
		kafkazk.TopicPartition{Topic: "t", Partition: 2}, kafkazk.TopicPartition{Topic: "t", Partition: 3}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	unknown := kafkazk.TopicPartition{Topic: "nope", Partition: 0}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{atPref: {1, 2}, displaced: {1, 2}, leaderless: {3, 1}, nostate: {1}, doomed: {2, 1}})
	ctx.leadership[atPref] = leadership(1, 0, []int32{1, 2}, 0)
	ctx.leadership[displaced] = leadership(2, 1, []int32{2, 1}, 1)
	ctx.leadership[leaderless] = leadership(-1, 3, []int32{3}, 4)
	ctx.leadership[doomed] = leadership(1, 0, []int32{1}, 0)
	ctx.topicsToDelete["doomed"] = true

	d := decideElectLeaders(ctx, ElectPreferred, []kafkazk.TopicPartition{atPref, displaced, leaderless, nostate, doomed, unknown})
	if d.kind != preferredElection || d.adminUnclean || !slices.Equal(d.candidates, []kafkazk.TopicPartition{displaced, leaderless}) {
		t.Fatalf("preferred: %+v", d)
	}
	for tp, want := range map[kafkazk.TopicPartition]error{atPref: kerr.ElectionNotNeeded, nostate: kerr.UnknownTopicOrPartition, unknown: kerr.UnknownTopicOrPartition, doomed: kerr.InvalidTopicException} {
		if !errors.Is(d.results[tp], want) {
			t.Errorf("preferred %v: %v, want %v", tp, d.results[tp], want)
		}
	}
	electLeadersResults(ElectPreferred, d, map[kafkazk.TopicPartition]error{leaderless: errNoEligibleLeader})
	if r, ok := d.results[displaced]; !ok || r != nil {
		t.Errorf("elected: %v %v", r, ok)
	}
	if !errors.Is(d.results[leaderless], kerr.PreferredLeaderNotAvailable) {
		t.Errorf("no preferred leader: %v", d.results[leaderless])
	}

	// Unclean, over every partition: a live leader needs no election.
	d = decideElectLeaders(ctx, ElectUnclean, nil)
	if d.kind != offlineElection || !d.adminUnclean || !slices.Equal(d.candidates, []kafkazk.TopicPartition{leaderless}) || len(d.results) != 4 {
		t.Fatalf("unclean: %+v", d)
	}
	if !errors.Is(d.results[displaced], kerr.ElectionNotNeeded) || !errors.Is(d.results[atPref], kerr.ElectionNotNeeded) {
		t.Errorf("unclean results %v", d.results)
	}
	electLeadersResults(ElectUnclean, d, map[kafkazk.TopicPartition]error{leaderless: errNoEligibleLeader})
	if !errors.Is(d.results[leaderless], kerr.EligibleLeadersNotAvailable) {
		t.Errorf("no eligible leader: %v", d.results[leaderless])
	}
	electLeadersResults(ElectUnclean, d, map[kafkazk.TopicPartition]error{leaderless: errWrittenByNewerController})
	if !errors.Is(d.results[leaderless], kerr.UnknownServerError) {
		t.Errorf("other failure: %v", d.results[leaderless])
	}
}

// Broker 1 prefers two partitions and leads neither: over the threshold
// both go back to it if it is in their ISR; nothing while disabled, under
// the threshold, while a reassignment runs, or while 1 shuts down.
func TestDecideAutoRebalance(t *testing.T) {
	p0, p1, p2 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1}, kafkazk.TopicPartition{Topic: "t", Partition: 2}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{p0: {1, 2}, p1: {1, 2}, p2: {2, 1}})
	ctx.leadership[p0] = leadership(2, 1, []int32{2, 1}, 1)
	ctx.leadership[p1] = leadership(2, 1, []int32{2}, 1)
	ctx.leadership[p2] = leadership(2, 0, []int32{2, 1}, 0)
	if got := decideAutoRebalance(ctx, true, 10); !slices.Equal(got, []kafkazk.TopicPartition{p0}) {
		t.Errorf("imbalanced: %v", got)
	}
	if got := decideAutoRebalance(ctx, false, 10); got != nil {
		t.Errorf("disabled: %v", got)
	}
	if got := decideAutoRebalance(ctx, true, 100); len(got) != 0 {
		t.Errorf("under the threshold: %v", got)
	}
	ctx.shuttingDown[1] = true
	if got := decideAutoRebalance(ctx, true, 10); len(got) != 0 {
		t.Errorf("preferred replica shutting down: %v", got)
	}
	delete(ctx.shuttingDown, 1)
	ctx.setAssignment(p2, replicaAssignment{Replicas: []int32{2, 1}, Adding: []int32{1}})
	if got := decideAutoRebalance(ctx, true, 10); got != nil {
		t.Errorf("during a reassignment: %v", got)
	}
}
