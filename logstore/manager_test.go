package logstore

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func openMgr(t *testing.T, dirs []string, opts ManagerOptions) *Manager {
	t.Helper()
	opts.Dirs, opts.Logger = dirs, quiet
	if opts.BrokerID == 0 {
		opts.BrokerID = -1
	}
	m, err := OpenManagerWithOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManagerLifecycle(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	dirs := []string{d1, d2}
	m := openMgr(t, dirs, ManagerOptions{BrokerID: 7, Defaults: smallCfg()})
	cluster := m.ClusterID()
	if len(cluster) != 22 {
		t.Fatalf("cluster id %q", cluster)
	}
	tid := NewUUID()
	logs := map[int32]Log{}
	for p := int32(0); p < 4; p++ {
		l, err := m.GetOrCreate("my.topic-x", p, tid, Config{})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 10+int(p), 2, 0, 0)
		logs[p] = l
	}
	// Spread over both dirs.
	if n1, n2 := len(entriesIn(t, d1)), len(entriesIn(t, d2)); n1 != 2 || n2 != 2 {
		t.Fatalf("partitions per dir %d %d", n1, n2)
	}
	if err := logs[1].DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	if l, ok := m.Get("my.topic-x", 2); !ok || l != logs[2] {
		t.Fatal("Get")
	}
	if _, ok := m.Get("nope", 0); ok {
		t.Fatal("Get of unknown partition")
	}
	// A second manager on the same dirs is refused (flock).
	if _, err := OpenManagerWithOptions(ManagerOptions{Dirs: dirs, Logger: quiet, BrokerID: -1}); err == nil {
		t.Fatal("second manager opened locked dirs")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		meta, _ := os.ReadFile(filepath.Join(d, "meta.properties"))
		re := regexp.MustCompile(`^#\n#\w{3} \w{3} \d\d \d\d:\d\d:\d\d \w+ \d{4}\nversion=0\nbroker.id=7\ncluster.id=` + regexp.QuoteMeta(cluster) + "\n$")
		if !re.Match(meta) {
			t.Fatalf("meta.properties %q", meta)
		}
		if _, err := os.Stat(filepath.Join(d, ".kafka_cleanshutdown")); err != nil {
			t.Fatal("no clean shutdown marker")
		}
	}
	rp, _ := os.ReadFile(filepath.Join(d1, "recovery-point-offset-checkpoint"))
	rp2, _ := os.ReadFile(filepath.Join(d2, "recovery-point-offset-checkpoint"))
	all := string(rp) + string(rp2)
	for _, line := range []string{"my.topic-x 0 20\n", "my.topic-x 1 22\n", "my.topic-x 3 26\n"} {
		if !strings.Contains(all, line) {
			t.Fatalf("recovery checkpoints %q lack %q", all, line)
		}
	}
	if !strings.HasPrefix(string(rp), "0\n2\n") {
		t.Fatalf("checkpoint header %q", rp)
	}
	ls1, _ := os.ReadFile(filepath.Join(d1, "log-start-offset-checkpoint"))
	ls2, _ := os.ReadFile(filepath.Join(d2, "log-start-offset-checkpoint"))
	if got := string(ls1) + string(ls2); !strings.Contains(got, "0\n1\nmy.topic-x 1 5\n") || !strings.Contains(got, "0\n0\n") {
		t.Fatalf("log start checkpoints %q", got)
	}
	pm, _ := os.ReadFile(filepath.Join(d1, "my.topic-x-0", "partition.metadata"))
	if string(pm) != "version: 0\ntopic_id: "+UUIDString(tid) {
		t.Fatalf("partition.metadata %q", pm)
	}

	// Reopen: same cluster, logs, start offsets; the marker is consumed.
	m2 := openMgr(t, dirs, ManagerOptions{Defaults: smallCfg()})
	if m2.ClusterID() != cluster || m2.BrokerID() != 7 {
		t.Fatalf("reopened ids %s %d", m2.ClusterID(), m2.BrokerID())
	}
	if _, err := os.Stat(filepath.Join(d1, ".kafka_cleanshutdown")); !os.IsNotExist(err) {
		t.Fatal("clean shutdown marker not deleted at start-up")
	}
	all2 := m2.All()
	if len(all2) != 4 || all2[1].Topic != "my.topic-x" || all2[1].Partition != 1 || all2[1].TopicID != tid {
		t.Fatalf("All %+v", all2)
	}
	if l := all2[1].Log; l.LogStartOffset() != 5 || l.LogEndOffset() != 22 {
		t.Fatalf("p1 LSO %d LEO %d", l.LogStartOffset(), l.LogEndOffset())
	}
	if m2.DirSize(d1)+m2.DirSize(d2) == 0 {
		t.Fatal("DirSize")
	}
	if err := m2.Delete("my.topic-x", 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := m2.Get("my.topic-x", 0); ok {
		t.Fatal("deleted partition still there")
	}
	if n := len(entriesIn(t, d1)) + len(entriesIn(t, d2)); n != 3 {
		t.Fatalf("%d partition dirs after delete", n)
	}
	m2.Close()

	// A different cluster id is refused.
	if _, err := OpenManagerWithOptions(ManagerOptions{Dirs: dirs, Logger: quiet, BrokerID: -1, ClusterID: "other"}); err == nil {
		t.Fatal("foreign cluster id accepted")
	}
	if _, err := OpenManagerWithOptions(ManagerOptions{Dirs: dirs, Logger: quiet, BrokerID: 8}); err == nil {
		t.Fatal("foreign broker id accepted")
	}
}

func entriesIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestManagerUncleanShutdownRecovers(t *testing.T) {
	d := t.TempDir()
	m := openMgr(t, []string{d}, ManagerOptions{Defaults: smallCfg()})
	l, _ := m.GetOrCreate("t", 0, [16]byte{}, Config{})
	appendN(t, l, 30, 2, 0, 0)
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	fl := l.(*FileLog)
	seg := segmentName(fl.Dir(), fl.SegmentBaseOffsets()[len(fl.SegmentBaseOffsets())-1], ".log")
	// Simulate a kill: no Close, so no clean-shutdown marker; torn tail.
	crash(fl)
	m.unlockDirs()
	f, _ := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("torn tail bytes ........................................................."))
	f.Close()
	m2 := openMgr(t, []string{d}, ManagerOptions{Defaults: smallCfg()})
	defer m2.Close()
	l2, ok := m2.Get("t", 0)
	if !ok || l2.LogEndOffset() != 60 || len(logRecords(t, l2)) != 60 {
		t.Fatalf("recovered log: ok %v", ok)
	}
}

func TestManagerRun(t *testing.T) {
	d := t.TempDir()
	cfg := smallCfg()
	cfg.RetentionMs = 1
	cfg.FlushMs = 1
	m := openMgr(t, []string{d}, ManagerOptions{Defaults: cfg, RetentionCheckInterval: 10 * time.Millisecond,
		FlushCheckInterval: 5 * time.Millisecond, CheckpointInterval: 10 * time.Millisecond})
	defer m.Close()
	l, _ := m.GetOrCreate("t", 0, [16]byte{}, Config{})
	appendN(t, l, 30, 2, 1000, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for l.LogStartOffset() != 60 || l.RecoveryPoint() != 60 {
		if time.Now().After(deadline) {
			t.Fatalf("retention/flush did not run: LSO %d RP %d", l.LogStartOffset(), l.RecoveryPoint())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
	entries, err := ReadCheckpoint(filepath.Join(d, "recovery-point-offset-checkpoint"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("checkpoint %v %v", entries, err)
	}
}

func TestCheckpointFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "replication-offset-checkpoint")
	in := []CheckpointEntry{{"orders", 0, 1523}, {"orders", 1, 1498}}
	if err := WriteCheckpoint(path, in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "0\n2\norders 0 1523\norders 1 1498\n" {
		t.Fatalf("%q", data)
	}
	out, err := ReadCheckpoint(path)
	if err != nil || len(out) != 2 || out[1] != in[1] {
		t.Fatalf("%v %v", out, err)
	}
	if e, err := ReadCheckpoint(path + ".missing"); err != nil || len(e) != 0 {
		t.Fatal("missing file")
	}
	for _, bad := range []string{"1\n0\n", "0\n2\nt 0 1\n", "0\n1\nt x 1\n", "0\n1\nt 0\n"} {
		os.WriteFile(path, []byte(bad), 0o644)
		if _, err := ReadCheckpoint(path); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	// Readers split on any whitespace.
	os.WriteFile(path, []byte("0\n1\nt   3\t9\n"), 0o644)
	if out, err := ReadCheckpoint(path); err != nil || out[0] != (CheckpointEntry{"t", 3, 9}) {
		t.Fatalf("%v %v", out, err)
	}
}

func TestManagerSetMeta(t *testing.T) {
	d := t.TempDir()
	m := openMgr(t, []string{d}, ManagerOptions{})
	// Fresh dir: the made-up ids may be replaced once.
	if err := m.SetMeta(3, "zkClusterIdAAAAAAAAAAA"); err != nil {
		t.Fatal(err)
	}
	if m.ClusterID() != "zkClusterIdAAAAAAAAAAA" || m.BrokerID() != 3 {
		t.Fatal("SetMeta not applied")
	}
	if err := m.SetMeta(3, "anotherClusterAAAAAAAA"); err == nil {
		t.Fatal("dir rebound to another cluster")
	}
	m.Close()
	m2 := openMgr(t, []string{d}, ManagerOptions{})
	defer m2.Close()
	if m2.ClusterID() != "zkClusterIdAAAAAAAAAAA" || m2.BrokerID() != 3 {
		t.Fatalf("persisted ids %s %d", m2.ClusterID(), m2.BrokerID())
	}
	if err := m2.SetMeta(4, "zkClusterIdAAAAAAAAAAA"); err == nil {
		t.Fatal("broker id changed on a used dir")
	}
}

// num.recovery.threads.per.data.dir opens several logs of a dir at once
// after an unclean shutdown; every one comes back whole.
func TestManagerRecoversLogsInParallel(t *testing.T) {
	d := t.TempDir()
	m := openMgr(t, []string{d}, ManagerOptions{Defaults: smallCfg()})
	const n = 12
	for p := int32(0); p < n; p++ {
		l, err := m.GetOrCreate("t", p, [16]byte{}, Config{})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 10+int(p), 2, 0, 0)
		crash(l.(*FileLog))
	}
	m.unlockDirs()
	m2 := openMgr(t, []string{d}, ManagerOptions{Defaults: smallCfg(), RecoveryThreads: 4})
	defer m2.Close()
	for p := int32(0); p < n; p++ {
		l, ok := m2.Get("t", p)
		if want := int64(2 * (10 + p)); !ok || l.LogEndOffset() != want || len(logRecords(t, l)) != int(want) {
			t.Fatalf("partition %d after recovery: hosted %v", p, ok)
		}
	}
}
