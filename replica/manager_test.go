package replica

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
)

// recordingFetchers records what the manager hands to the fetchers.
type recordingFetchers struct {
	following map[TopicPartition]string // partition → leader address
	unfollows int
}

func (f *recordingFetchers) Follow(_ int32, addr string, p *Partition) {
	f.following[TopicPartition{p.Topic, p.Index}] = addr
}

func (f *recordingFetchers) Unfollow(tps ...TopicPartition) {
	for _, tp := range tps {
		delete(f.following, tp)
		f.unfollows++
	}
}

func (f *recordingFetchers) Close() {}

func newTestManager(t *testing.T, dir string) (*Manager, *recordingFetchers, *logstore.Manager) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	logs, err := logstore.OpenManagerWithOptions(logstore.ManagerOptions{Dirs: []string{dir}, Defaults: logstore.DefaultConfig(), Logger: logger, BrokerID: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := &recordingFetchers{following: map[TopicPartition]string{}}
	m := NewManager(ManagerConfig{
		BrokerID:         1,
		Logs:             logs,
		Fetchers:         f,
		Logger:           logger,
		TopicConfigs:     func(string) map[string]string { return nil },
		LogConfig:        func(map[string]string) logstore.Config { return logstore.DefaultConfig() },
		PartitionOptions: func(map[string]string) Options { return Options{LocalID: 1, MinInsyncReplicas: 1} },
	})
	return m, f, logs
}

func role(leader, epoch int32, replicas ...int32) Role {
	return Role{
		LeaderAndIsr: LeaderAndIsr{Leader: leader, LeaderEpoch: epoch, Isr: replicas, Replicas: replicas},
		Topic:        "t", Partition: 0, LeaderAddr: "127.0.0.1:9",
	}
}

func TestManagerAppliesRolesInEpochOrder(t *testing.T) {
	m, f, logs := newTestManager(t, t.TempDir())
	defer logs.Close()

	if _, _, err := m.BecomeLeaderOrFollower(role(2, 0, 2, 3)); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("a broker not among the replicas: %v", err)
	}
	if m.Get("t", 0) != nil {
		t.Fatal("a replica was hosted for a partition this broker is not assigned")
	}
	p, leads, err := m.BecomeLeaderOrFollower(role(2, 1, 1, 2))
	if err != nil || leads || p.IsLeader() {
		t.Fatalf("follower: leads %v, %v", leads, err)
	}
	if f.following[TopicPartition{"t", 0}] != "127.0.0.1:9" {
		t.Fatalf("follower not handed to the fetcher: %v", f.following)
	}
	if _, _, err := m.BecomeLeaderOrFollower(role(1, 1, 1, 2)); !errors.Is(err, kerr.StaleControllerEpoch) {
		t.Fatalf("same epoch again: %v", err)
	}
	p2, leads, err := m.BecomeLeaderOrFollower(role(1, 2, 1, 2))
	if err != nil || !leads || p2 != p || !p.IsLeader() || p.LeaderEpoch() != 2 {
		t.Fatalf("promotion: leads %v, leader %v, epoch %d, %v", leads, p.IsLeader(), p.LeaderEpoch(), err)
	}
	if _, ok := f.following[TopicPartition{"t", 0}]; ok {
		t.Fatal("a leader is still being fetched")
	}
	if _, err := m.StopReplica("t", 0, 1, false); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("StopReplica with an older epoch: %v", err)
	}
	if stopped, err := m.StopReplica("t", 0, -2, true); err != nil || stopped != p || p.IsLeader() {
		t.Fatalf("StopReplica while deleting: %v", err)
	}
	if m.Get("t", 0) != nil || len(m.Partitions()) != 0 {
		t.Fatal("stopped replica still hosted")
	}
	if _, ok := logs.Get("t", 0); ok {
		t.Fatal("deleted replica's log kept")
	}
}

func TestManagerCheckpointsHighWatermarks(t *testing.T) {
	dir := t.TempDir()
	m, _, logs := newTestManager(t, dir)
	p, _, err := m.BecomeLeaderOrFollower(role(1, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	batch, err := logstore.BuildBatch([]logstore.KV{{Value: []byte("a")}, {Value: []byte("b")}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	batches, err := logstore.ParseBatches(batch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader(batches, 1, AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	if hw := p.HighWatermark(); hw != 2 {
		t.Fatalf("HW %d after two records with ISR {self}", hw)
	}
	m.CheckpointHighWatermarks()
	logs.Close()

	// After a restart the replica starts from the checkpointed HW, also
	// as a follower that has not fetched anything yet.
	m2, _, logs2 := newTestManager(t, dir)
	defer logs2.Close()
	p2, _, err := m2.BecomeLeaderOrFollower(role(2, 1, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if hw := p2.HighWatermark(); hw != 2 {
		t.Fatalf("HW after restart %d, want the checkpointed 2", hw)
	}
}

// A follower that took its state without the leader's endpoint (from the
// state znode, when the controller could not reach it) starts fetching
// when the controller's LeaderAndIsr for that same state brings one, though
// the request is otherwise stale.
func TestManagerSameStateWithEndpointStartsFetching(t *testing.T) {
	m, f, logs := newTestManager(t, t.TempDir())
	defer logs.Close()
	tp := TopicPartition{"t", 0}
	noAddr := role(2, 4, 1, 2)
	noAddr.LeaderAddr = ""
	if _, _, err := m.BecomeLeaderOrFollower(noAddr); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.following[tp]; ok {
		t.Fatal("fetching without an endpoint")
	}
	if _, _, err := m.BecomeLeaderOrFollower(role(2, 4, 1, 2)); !errors.Is(err, kerr.StaleControllerEpoch) {
		t.Fatalf("same state again: %v", err)
	}
	if f.following[tp] != "127.0.0.1:9" {
		t.Fatalf("not fetching from the endpoint the same state brought: %v", f.following)
	}
	// An older epoch, or another leader in the same one, changes nothing.
	delete(f.following, tp)
	if _, _, err := m.BecomeLeaderOrFollower(role(3, 4, 1, 2, 3)); !errors.Is(err, kerr.StaleControllerEpoch) {
		t.Fatalf("another leader in the same epoch: %v", err)
	}
	if _, _, err := m.BecomeLeaderOrFollower(role(2, 3, 1, 2)); !errors.Is(err, kerr.StaleControllerEpoch) {
		t.Fatalf("older epoch: %v", err)
	}
	if len(f.following) != 0 {
		t.Fatalf("a stale request started fetching: %v", f.following)
	}
}
