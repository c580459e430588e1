package controller

import (
	"reflect"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
)

func set(ids ...int32) map[int32]bool {
	m := map[int32]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func state(leader, epoch int32, isr ...int32) leaderAndIsr {
	return leaderAndIsr{Leader: leader, LeaderEpoch: epoch, ISR: isr, PartitionEpoch: 9}
}

func checkElection(t *testing.T, name string, got electionResult, elected bool, want leaderAndIsr, recipients []int32) {
	t.Helper()
	if got.Elected != elected {
		t.Errorf("%s: elected %v, want %v (%+v)", name, got.Elected, elected, got)
		return
	}
	if elected && !reflect.DeepEqual(got.New, want) {
		t.Errorf("%s: new state %+v, want %+v", name, got.New, want)
	}
	if !reflect.DeepEqual(got.Recipients, recipients) {
		t.Errorf("%s: recipients %v, want %v", name, got.Recipients, recipients)
	}
}

func TestElectOffline(t *testing.T) {
	ar := []int32{1, 2, 3}
	for _, tc := range []struct {
		name         string
		cur          leaderAndIsr
		l            liveness
		unclean      bool
		recovery     bool
		elected      bool
		want         leaderAndIsr
		wantUnclean  bool
		wantRecpient []int32
	}{
		{name: "leader died, next ISR member in AR order",
			cur: state(1, 4, 3, 1, 2), l: liveness{Live: set(2, 3)},
			elected: true, want: leaderAndIsr{Leader: 2, LeaderEpoch: 5, ISR: []int32{3, 2}, PartitionEpoch: 9},
			wantRecpient: []int32{2, 3}},
		{name: "live replica outside ISR is not clean",
			cur: state(1, 4, 1, 3), l: liveness{Live: set(2, 3)},
			elected: true, want: leaderAndIsr{Leader: 3, LeaderEpoch: 5, ISR: []int32{3}, PartitionEpoch: 9},
			wantRecpient: []int32{2, 3}},
		{name: "no live ISR member, unclean off: stays offline",
			cur: state(-1, 4, 1), l: liveness{Live: set(2, 3)},
			elected: false, wantRecpient: []int32{2, 3}},
		{name: "no live ISR member, unclean on: first live replica, ISR just it",
			cur: state(-1, 4, 1), l: liveness{Live: set(3, 2)}, unclean: true,
			elected: true, want: leaderAndIsr{Leader: 2, LeaderEpoch: 5, ISR: []int32{2}, PartitionEpoch: 9},
			wantUnclean: true, wantRecpient: []int32{2, 3}},
		{name: "unclean with leader recovery (IBP >= 3.2)",
			cur: state(-1, 4, 1), l: liveness{Live: set(3)}, unclean: true, recovery: true,
			elected: true, want: leaderAndIsr{Leader: 3, LeaderEpoch: 5, ISR: []int32{3}, LeaderRecoveryState: kafkazk.LeaderRecovering, PartitionEpoch: 9},
			wantUnclean: true, wantRecpient: []int32{3}},
		{name: "nothing live at all, even unclean",
			cur: state(-1, 4, 1), l: liveness{Live: set()}, unclean: true,
			elected: false, wantRecpient: []int32{}},
		{name: "shutting-down broker is not live here",
			cur: state(1, 0, 1, 2, 3), l: liveness{Live: set(2, 3), ShuttingDown: set(2)},
			elected: true, want: leaderAndIsr{Leader: 3, LeaderEpoch: 1, ISR: []int32{3}, PartitionEpoch: 9},
			wantRecpient: []int32{3}},
		{name: "replica on a failed log dir is not live",
			cur: state(1, 0, 1, 2, 3), l: liveness{Live: set(1, 2, 3), OfflineReplicas: set(1, 2)},
			elected: true, want: leaderAndIsr{Leader: 3, LeaderEpoch: 1, ISR: []int32{3}, PartitionEpoch: 9},
			wantRecpient: []int32{3}},
	} {
		got := electOffline(ar, tc.cur, tc.l, tc.unclean, tc.recovery)
		checkElection(t, tc.name, got, tc.elected, tc.want, tc.wantRecpient)
		if got.Unclean != tc.wantUnclean {
			t.Errorf("%s: unclean %v", tc.name, got.Unclean)
		}
	}
}

func TestElectReassign(t *testing.T) {
	l := liveness{Live: set(1, 2, 3, 4, 5)}
	// Moving from [1,2,3] to [4,5,3]: only 3 is in the ISR.
	got := electReassign([]int32{4, 5, 3}, state(1, 2, 1, 2, 3), l)
	checkElection(t, "target ISR member", got, true, leaderAndIsr{Leader: 3, LeaderEpoch: 3, ISR: []int32{1, 2, 3}, PartitionEpoch: 9}, []int32{4, 5, 3})
	// New replicas caught up: the first target in order wins.
	got = electReassign([]int32{4, 5, 3}, state(1, 2, 1, 2, 3, 5, 4), l)
	checkElection(t, "first caught-up target", got, true, leaderAndIsr{Leader: 4, LeaderEpoch: 3, ISR: []int32{1, 2, 3, 5, 4}, PartitionEpoch: 9}, []int32{4, 5, 3})
	got = electReassign([]int32{4, 5}, state(1, 2, 1, 2, 3), l)
	checkElection(t, "no target in ISR", got, false, leaderAndIsr{}, []int32{4, 5})
}

func TestElectPreferred(t *testing.T) {
	ar := []int32{2, 1, 3}
	got := electPreferred(ar, state(1, 7, 1, 2, 3), liveness{Live: set(1, 2, 3)})
	checkElection(t, "preferred back in ISR", got, true, leaderAndIsr{Leader: 2, LeaderEpoch: 8, ISR: []int32{1, 2, 3}, PartitionEpoch: 9}, ar)
	got = electPreferred(ar, state(1, 7, 1, 3), liveness{Live: set(1, 2, 3)})
	checkElection(t, "preferred not in ISR", got, false, leaderAndIsr{}, ar)
	got = electPreferred(ar, state(1, 7, 1, 2, 3), liveness{Live: set(1, 3)})
	checkElection(t, "preferred dead", got, false, leaderAndIsr{}, ar)
	// Only AR[0] qualifies, even if AR[1] would do.
	got = electPreferred(ar, state(3, 7, 1, 3), liveness{Live: set(1, 3)})
	checkElection(t, "never the second replica", got, false, leaderAndIsr{}, ar)
}

func TestElectControlledShutdown(t *testing.T) {
	ar := []int32{1, 2, 3}
	l := liveness{Live: set(1, 2, 3), ShuttingDown: set(1)}
	got := electControlledShutdown(ar, state(1, 3, 1, 2, 3), l)
	checkElection(t, "leader shutting down", got, true, leaderAndIsr{Leader: 2, LeaderEpoch: 4, ISR: []int32{2, 3}, PartitionEpoch: 9}, []int32{1, 2, 3})
	got = electControlledShutdown(ar, state(1, 3, 1), l)
	checkElection(t, "sole ISR member shutting down", got, false, leaderAndIsr{}, []int32{1, 2, 3})
	l2 := liveness{Live: set(1, 2, 3), ShuttingDown: set(1, 2)}
	got = electControlledShutdown(ar, state(1, 3, 2, 1, 3), l2)
	checkElection(t, "two shutting down", got, true, leaderAndIsr{Leader: 3, LeaderEpoch: 4, ISR: []int32{3}, PartitionEpoch: 9}, []int32{1, 2, 3})
	l3 := liveness{Live: set(1, 3), ShuttingDown: set(1)}
	got = electControlledShutdown(ar, state(1, 3, 1, 2, 3), l3)
	checkElection(t, "dead replica gets nothing", got, true, leaderAndIsr{Leader: 3, LeaderEpoch: 4, ISR: []int32{2, 3}, PartitionEpoch: 9}, []int32{1, 3})
}

func TestInitialLeaderAndIsr(t *testing.T) {
	got, ok := initialLeaderAndIsr([]int32{3, 1, 2}, liveness{Live: set(1, 2)})
	if !ok || !reflect.DeepEqual(got, leaderAndIsr{Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2}}) {
		t.Errorf("initial %+v %v", got, ok)
	}
	if _, ok := initialLeaderAndIsr([]int32{3}, liveness{Live: set(1, 2)}); ok {
		t.Error("partition without live replica came online")
	}
}

func TestRemoveFromIsr(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cur     leaderAndIsr
		replica int32
		changed bool
		want    leaderAndIsr
	}{
		{"follower leaves", state(1, 5, 1, 2, 3), 2, true, leaderAndIsr{Leader: 1, LeaderEpoch: 6, ISR: []int32{1, 3}, PartitionEpoch: 9}},
		{"leader leaves", state(1, 5, 1, 2, 3), 1, true, leaderAndIsr{Leader: -1, LeaderEpoch: 6, ISR: []int32{2, 3}, PartitionEpoch: 9}},
		// Kafka keeps leader -1 and the ISR frozen at its last member.
		{"last member stays", state(3, 3, 3), 3, true, leaderAndIsr{Leader: -1, LeaderEpoch: 4, ISR: []int32{3}, PartitionEpoch: 9}},
		{"not in ISR", state(1, 5, 1, 3), 2, false, state(1, 5, 1, 3)},
	} {
		cur := tc.cur
		isrBefore := append([]int32(nil), cur.ISR...)
		got, changed := removeFromIsr(cur, tc.replica)
		if changed != tc.changed || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v, want %+v %v", tc.name, got, changed, tc.want, tc.changed)
		}
		if !reflect.DeepEqual(cur.ISR, isrBefore) {
			t.Errorf("%s: input ISR modified to %v", tc.name, cur.ISR)
		}
	}
}
