package replica

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A replica on a failed log dir (HandleLogDirFailure) stops: it leads no
// more, its fetcher is dropped, and every later LeaderAndIsr or
// StopReplica for it, whatever its epoch, answers KAFKA_STORAGE_ERROR,
// which is how the controller learns that the replica is offline.
func TestLogDirFailureTakesReplicasOffline(t *testing.T) {
	m, f, logs := newTestManager(t, t.TempDir())
	defer logs.Close()
	leader, _, err := m.BecomeLeaderOrFollower(role(1, 1, 1, 2))
	if err != nil || !leader.IsLeader() {
		t.Fatalf("leader: %v", err)
	}
	follower := role(2, 1, 1, 2)
	follower.Partition = 1
	if _, _, err := m.BecomeLeaderOrFollower(follower); err != nil {
		t.Fatal(err)
	}
	healthy := role(1, 1, 1, 2)
	healthy.Partition = 2
	if _, _, err := m.BecomeLeaderOrFollower(healthy); err != nil {
		t.Fatal(err)
	}

	off := m.HandleLogDirFailure([]TopicPartition{{"t", 0}, {"t", 1}, {"t", 7}})
	if len(off) != 2 {
		t.Fatalf("taken offline: %v", off)
	}
	if leader.IsLeader() || !leader.Offline() || !m.Get("t", 1).Offline() {
		t.Fatal("replicas not offline")
	}
	if _, ok := f.following[TopicPartition{"t", 1}]; ok {
		t.Fatal("offline follower still fetching")
	}
	if _, err := leader.AppendAsLeader(nil, -1, AppendRules{LogAppendTime: -1}); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("append to an offline replica: %v", err)
	}
	newer := role(1, 5, 1, 2)
	if _, _, err := m.BecomeLeaderOrFollower(newer); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("LeaderAndIsr of an offline replica: %v", err)
	}
	if leader.IsLeader() || leader.BecomeLeader(newer.LeaderAndIsr) || leader.BecomeFollower(2, 6) {
		t.Fatal("an offline replica took a role")
	}
	if _, err := m.StopReplica("t", 0, -1, true); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("StopReplica of an offline replica: %v", err)
	}
	if m.Get("t", 0) == nil {
		t.Fatal("offline replica forgotten: a later LeaderAndIsr would recreate its log elsewhere")
	}
	// The replica on a healthy dir is untouched.
	if p := m.Get("t", 2); p.Offline() || !p.IsLeader() {
		t.Fatal("healthy replica affected")
	}
}
