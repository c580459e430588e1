package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// breakWrites makes the active segment of l refuse writes, as a file
// system that went read-only or lost its device does: its .log is
// reopened read-only.
func breakWrites(t *testing.T, l Log) {
	t.Helper()
	fl := l.(*FileLog)
	fl.mu.Lock()
	defer fl.mu.Unlock()
	s := fl.active()
	ro, err := os.Open(s.log.Name())
	if err != nil {
		t.Fatal(err)
	}
	s.log.Close()
	s.log = ro
}

// A write the file system refuses takes the whole dir offline: the
// append is refused as ErrLogDirFailed, OnDirFailure hears of the dir and
// its partitions once, the dir's logs are no longer served or created
// again, new partitions go to the other dir, and the next start finds
// every record appended before the failure.
func TestDirFailureTakesDirOffline(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	failures := make(chan DirFailure, 4)
	m := openMgr(t, []string{d1, d2}, ManagerOptions{BrokerID: 3, Defaults: smallCfg(), OnDirFailure: func(f DirFailure) { failures <- f }})
	tid := NewUUID()
	logs := map[int32]Log{}
	for p := int32(0); p < 4; p++ {
		l, err := m.GetOrCreate("t", p, tid, Config{})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 3, 2, 0, 0)
		logs[p] = l
	}
	var inD1 []int32
	for _, pl := range m.All() {
		if pl.Dir == d1 {
			inD1 = append(inD1, pl.Partition)
		}
	}
	if len(inD1) != 2 {
		t.Fatalf("partitions in %s: %v", d1, inD1)
	}
	failing := logs[inD1[0]]
	breakWrites(t, failing)
	_, err := failing.AppendAsLeader([]Batch{mkBatch(t, 1, 0)}, 0, -1)
	if !errors.Is(err, ErrLogDirFailed) {
		t.Fatalf("append to a failing file: %v", err)
	}
	var f DirFailure
	select {
	case f = <-failures:
	case <-time.After(5 * time.Second):
		t.Fatal("no dir failure reported")
	}
	want := []PartitionKey{{"t", inD1[0]}, {"t", inD1[1]}}
	if f.Dir != d1 || f.AllFailed || !slices.Equal(f.Partitions, want) || f.Err == nil {
		t.Fatalf("failure %+v, want dir %s partitions %v", f, d1, want)
	}
	// Every log of the dir is stopped, the failing one and its neighbour.
	for _, p := range inD1 {
		if _, err := logs[p].AppendAsLeader([]Batch{mkBatch(t, 1, 0)}, 0, -1); !errors.Is(err, ErrLogDirFailed) && !errors.Is(err, ErrClosed) {
			t.Errorf("append to partition %d of the offline dir: %v", p, err)
		}
		if _, ok := m.Get("t", p); ok {
			t.Errorf("partition %d of the offline dir still served", p)
		}
		if _, err := m.GetOrCreate("t", p, tid, Config{}); !errors.Is(err, ErrLogDirFailed) {
			t.Errorf("partition %d recreated elsewhere: %v", p, err)
		}
	}
	if got := m.OfflineDirs(); !slices.Equal(got, []string{d1}) || !m.DirOffline(d1) || m.DirOffline(d2) {
		t.Fatalf("offline dirs %v", got)
	}
	// The other dir keeps working and takes the new partitions.
	for p := range logs {
		if !slices.Contains(inD1, p) {
			appendN(t, logs[p], 1, 1, 0, 0)
		}
	}
	if _, err := m.GetOrCreate("t", 9, tid, Config{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d2, "t-9")); err != nil {
		t.Fatalf("new partition not in the online dir: %v", err)
	}
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	// Reported once, however many of its logs fail.
	m.MarkDirOffline(d1, errors.New("again"))
	select {
	case f := <-failures:
		t.Fatalf("second report %+v", f)
	case <-time.After(50 * time.Millisecond):
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d1, cleanShutdownFile)); !os.IsNotExist(err) {
		t.Errorf("offline dir marked cleanly shut down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d2, cleanShutdownFile)); err != nil {
		t.Errorf("online dir not marked cleanly shut down: %v", err)
	}

	// An operator fixed the dir: the next start serves it again, with
	// what was appended before the failure.
	m2 := openMgr(t, []string{d1, d2}, ManagerOptions{BrokerID: 3, Defaults: smallCfg()})
	defer m2.Close()
	for _, p := range inD1 {
		l, ok := m2.Get("t", p)
		if !ok {
			t.Fatalf("partition %d not loaded again", p)
		}
		if leo := l.LogEndOffset(); leo != 6 {
			t.Errorf("partition %d log end offset %d, want 6", p, leo)
		}
	}
}

// With its last online dir failing the Manager says so: the broker has
// nowhere left to store anything.
func TestDirFailureAllDirs(t *testing.T) {
	failures := make(chan DirFailure, 2)
	m := openMgr(t, []string{t.TempDir()}, ManagerOptions{Defaults: smallCfg(), OnDirFailure: func(f DirFailure) { failures <- f }})
	defer m.Close()
	l, err := m.GetOrCreate("t", 0, NewUUID(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	breakWrites(t, l)
	if _, err := l.AppendAsLeader([]Batch{mkBatch(t, 1, 0)}, 0, -1); !errors.Is(err, ErrLogDirFailed) {
		t.Fatalf("append: %v", err)
	}
	select {
	case f := <-failures:
		if !f.AllFailed {
			t.Fatalf("failure %+v", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dir failure reported")
	}
	if _, err := m.GetOrCreate("u", 0, NewUUID(), Config{}); !errors.Is(err, ErrLogDirFailed) {
		t.Fatalf("create with every dir offline: %v", err)
	}
}

// The log's own refusals are not storage failures.
func TestIsStorageFailure(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrClosed, false},
		{ErrUnexpectedAppendOffset, false},
		{ErrRecordTooLarge, false},
		{&os.PathError{Op: "write", Path: "x", Err: errors.New("no space left on device")}, true},
		{&os.LinkError{Op: "rename", Old: "a", New: "b", Err: os.ErrPermission}, true},
		{errors.Join(errors.New("x"), &os.PathError{Op: "fsync", Path: "x", Err: os.ErrInvalid}), true},
	} {
		if got := isStorageFailure(c.err); got != c.want {
			t.Errorf("isStorageFailure(%v) = %v", c.err, got)
		}
	}
}

// A dir that fails while a partition is created in it goes offline, and
// the partition is not created again in another dir: its leftovers in the
// failed dir would clash with that copy at the next start.
func TestDirFailureOnCreate(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	failures := make(chan DirFailure, 2)
	m := openMgr(t, []string{d1, d2}, ManagerOptions{Defaults: smallCfg(), OnDirFailure: func(f DirFailure) { failures <- f }})
	defer m.Close()
	// Something in the way of the partition's directory in d1, the dir a
	// first partition goes to.
	if err := os.WriteFile(filepath.Join(d1, "t-0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetOrCreate("t", 0, NewUUID(), Config{}); !errors.Is(err, ErrLogDirFailed) {
		t.Fatalf("create in a failing dir: %v", err)
	}
	select {
	case f := <-failures:
		if f.Dir != d1 || f.AllFailed {
			t.Fatalf("failure %+v", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no dir failure reported")
	}
	if _, err := m.GetOrCreate("t", 0, NewUUID(), Config{}); !errors.Is(err, ErrLogDirFailed) {
		t.Fatalf("created again after its dir failed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d2, "t-0")); !os.IsNotExist(err) {
		t.Fatalf("partition created in the other dir: %v", err)
	}
	if _, err := m.GetOrCreate("t", 1, NewUUID(), Config{}); err != nil {
		t.Fatalf("another partition: %v", err)
	}
}
