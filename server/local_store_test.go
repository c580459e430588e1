package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
)

// TestStandaloneUpgradeKeepsTopics starts a broker on a log dir as an
// earlier standalone broker left it — the topic table in
// kbroker-topics.json, the producer id block in its own file, partition
// logs with data at a later leader epoch — and checks that the topics,
// their ids and configs, the data and the epoch survive the move into the
// metadata store, and that producer ids continue past the old block.
func TestStandaloneUpgradeKeepsTopics(t *testing.T) {
	dir := t.TempDir()
	logDir := filepath.Join(dir, "logs")
	id := [16]byte{0xa, 0xb, 0xc}
	logs, err := logstore.OpenManagerWithOptions(logstore.ManagerOptions{Dirs: []string{logDir}, Defaults: logstore.DefaultConfig(), BrokerID: 0})
	if err != nil {
		t.Fatal(err)
	}
	clusterID := logs.ClusterID()
	for p := int32(0); p < 2; p++ {
		l, err := logs.GetOrCreate("old", p, id, logstore.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.AssignLeaderEpoch(3, 0); err != nil {
			t.Fatal(err)
		}
		raw, err := logstore.BuildBatch([]logstore.KV{{Value: []byte("kept")}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		batches, err := logstore.ParseBatches(raw)
		if err != nil {
			t.Fatal(err)
		}
		batches[0].Header.PartitionLeaderEpoch = 3
		if _, err := l.AppendAsFollower(batches); err != nil {
			t.Fatal(err)
		}
	}
	if err := logs.Close(); err != nil {
		t.Fatal(err)
	}
	table, _ := json.Marshal([]map[string]any{{"name": "old", "id": id, "partitions": 2, "configs": map[string]string{"retention.ms": "123456"}}})
	if err := os.WriteFile(filepath.Join(logDir, legacyTopicsFile), table, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, legacyProducerIDBlockFile), []byte("7000\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	db := startDataBroker(t, dir)
	tp := db.b.topic("old")
	if tp == nil || tp.ID != id || len(tp.Partitions) != 2 || tp.Configs["retention.ms"] != "123456" {
		t.Fatalf("after the upgrade: %+v", tp)
	}
	if db.b.logs.ClusterID() != clusterID {
		t.Errorf("cluster id %q, was %q", db.b.logs.ClusterID(), clusterID)
	}
	for i, p := range tp.Partitions {
		if p == nil || !p.IsLeader() || p.LeaderEpoch() < 3 || p.LogEndOffset() != 1 {
			t.Fatalf("partition %d: %v leader epoch %d LEO %d", i, p != nil && p.IsLeader(), p.LeaderEpoch(), p.LogEndOffset())
		}
	}
	cl := db.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"old": {0: kgo.NewOffset().AtStart()}}))
	fs := cl.PollFetches(testContext(t))
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "kept" {
		t.Fatalf("records after the upgrade: %v, errors %v", recs, fs.Errors())
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = 60000
	resp, err := req.RequestWith(testContext(t), cl)
	if err != nil || resp.ErrorCode != 0 || resp.ProducerID < 7000 {
		t.Fatalf("InitProducerId after the upgrade: id %d, code %d, %v", resp.ProducerID, resp.ErrorCode, err)
	}
	for _, f := range []string{legacyTopicsFile, legacyProducerIDBlockFile} {
		if _, err := os.Stat(filepath.Join(logDir, f)); !os.IsNotExist(err) {
			t.Errorf("%s still in place after the upgrade", f)
		}
	}

	// The store is the topic table from now on: a restart finds the topic
	// without the old file.
	db.stop()
	db = startDataBroker(t, dir)
	if tp := db.b.topic("old"); tp == nil || tp.ID != id || tp.Configs["retention.ms"] != "123456" {
		t.Fatalf("after a restart: %+v", tp)
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}
