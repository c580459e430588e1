package replica

import (
	"slices"
	"testing"
	"time"
)

func rack(s string) *string { return &s }

// view is a reachable replica in rack r ("" for none).
func view(id int32, r string, leo int64, since time.Duration) ReadReplicaView {
	v := ReadReplicaView{ID: id, HasEndpoint: true, LogEndOffset: leo, SinceCaughtUp: since}
	if r != "" {
		v.Rack = rack(r)
	}
	return v
}

// SelectReadReplica is RackAwareReplicaSelector followed by
// findPreferredReadReplica's rule that the leader is never named.
func TestSelectReadReplica(t *testing.T) {
	leader := view(1, "r1", 100, 0)
	tests := []struct {
		name       string
		sel        ReplicaSelector
		clientRack string
		leader     ReadReplicaView
		replicas   []ReadReplicaView
		want       int32
	}{
		{"rack holds one follower", SelectRackAware, "r2", leader,
			[]ReadReplicaView{view(2, "r2", 100, 0), view(3, "r3", 100, 0)}, 2},
		{"LeaderSelector never moves the consumer", SelectLeader, "r2", leader,
			[]ReadReplicaView{view(2, "r2", 100, 0)}, -1},
		{"client sent no rack", SelectRackAware, "", leader,
			[]ReadReplicaView{view(2, "r2", 100, 0)}, -1},
		{"client rack holds no replica", SelectRackAware, "r9", leader,
			[]ReadReplicaView{view(2, "r2", 100, 0), view(3, "r3", 100, 0)}, -1},
		{"leader in the client's rack", SelectRackAware, "r2", view(1, "r2", 100, 0),
			[]ReadReplicaView{view(2, "r2", 100, 0)}, -1},
		{"brokers without broker.rack", SelectRackAware, "r2", view(1, "", 100, 0),
			[]ReadReplicaView{view(2, "", 100, 0)}, -1},
		{"most caught up by log end offset", SelectRackAware, "r2", leader,
			[]ReadReplicaView{view(2, "r2", 90, 0), view(3, "r2", 95, time.Second), view(4, "r3", 100, 0)}, 3},
		{"then by least time since caught up", SelectRackAware, "r2", leader,
			[]ReadReplicaView{view(4, "r2", 100, 2*time.Second), view(2, "r2", 100, time.Second), view(3, "r2", 100, 3*time.Second)}, 2},
		{"then by the greater broker id", SelectRackAware, "r2", leader,
			[]ReadReplicaView{view(3, "r2", 100, 0), view(5, "r2", 100, 0), view(4, "r2", 100, 0)}, 5},
		{"no endpoint on the client's listener is in no rack", SelectRackAware, "r2", leader,
			[]ReadReplicaView{{ID: 2, Rack: rack("r2"), LogEndOffset: 100}, view(3, "r2", 90, 0)}, 3},
		{"leader without an endpoint does not hold the rack", SelectRackAware, "r2", ReadReplicaView{ID: 1, Rack: rack("r2"), LogEndOffset: 100},
			[]ReadReplicaView{view(2, "r2", 100, 0)}, 2},
		{"rack is matched exactly", SelectRackAware, "R2", leader,
			[]ReadReplicaView{view(2, "r2", 100, 0)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectReadReplica(tt.sel, tt.clientRack, tt.leader, tt.replicas); got != tt.want {
				t.Errorf("SelectReadReplica = %d, want %d", got, tt.want)
			}
		})
	}
}

func candidateIDs(c []ReadReplicaCandidate) []int32 {
	var ids []int32
	for _, r := range c {
		ids = append(ids, r.ID)
	}
	return ids
}

// ReadReplicaCandidates: the followers in the committed ISR whose last
// fetch showed them holding the fetch offset.
func TestReadReplicaCandidates(t *testing.T) {
	s := NewLeaderState(1, LeaderConfig{ReplicaLagTimeMax: lag, MinInsyncReplicas: 1}, 0, 20)
	if !s.BecomeLeader(LeaderAndIsr{Leader: 1, LeaderEpoch: 5, Isr: []int32{1, 2, 3}, Replicas: []int32{1, 2, 3, 4}}, 20, ms(0)).Applied {
		t.Fatal("BecomeLeader not applied")
	}
	if got := s.ReadReplicaCandidates(0, ms(0)); len(got) != 0 {
		t.Fatalf("before any follower fetched: %v, want none (log end offsets unknown)", got)
	}
	for _, f := range []struct {
		id            int32
		start, offset int64
	}{{2, 0, 20}, {3, 5, 12}, {4, 0, 20}} {
		if _, err := s.UpdateFollowerFetch(f.id, f.offset, f.start, ms(1000), 20); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		offset int64
		want   []int32
	}{
		{20, []int32{2}}, // 3 has only up to 12; 4 is not in the ISR
		{12, []int32{2, 3}},
		{4, []int32{2}}, // below 3's log start
		{21, nil},       // past every follower's log end
	} {
		if got := candidateIDs(s.ReadReplicaCandidates(tt.offset, ms(3000))); !slices.Equal(got, tt.want) {
			t.Errorf("ReadReplicaCandidates(%d) = %v, want %v", tt.offset, got, tt.want)
		}
	}
	got := s.ReadReplicaCandidates(12, ms(3000))
	want := []ReadReplicaCandidate{{ID: 2, LogEndOffset: 20, SinceCaughtUp: 2 * time.Second}, {ID: 3, LogEndOffset: 12, SinceCaughtUp: 3 * time.Second}}
	if !slices.Equal(got, want) {
		t.Errorf("candidates = %+v, want %+v", got, want)
	}
	s.Resign()
	if got := s.ReadReplicaCandidates(12, ms(3000)); got != nil {
		t.Errorf("after resigning: %v, want none", got)
	}
}
