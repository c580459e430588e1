package zkstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// reopen closes s and opens its directory again, as a restart does.
func reopen(t *testing.T, s *LocalStore, dir string) *LocalStore {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

func TestLocalStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Fresh() {
		t.Fatal("a new store is not fresh")
	}
	c := s.Connect()
	mustCreate(t, c, "/a", "1", ModePersistent)
	mustCreate(t, c, "/a/b", "2", ModePersistent)
	if _, err := c.Set("/a/b", []byte("3"), 0); err != nil {
		t.Fatal(err)
	}
	seq, err := c.Create("/a/n-", nil, ModePersistentSequential)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "/a/gone", "x", ModePersistent)
	if err := c.Delete("/a/gone", -1); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "/a/eph", "e", ModeEphemeral)
	if _, err := c.Multi(&OpCreate{Path: "/m", Data: []byte("m")}, &OpSet{Path: "/a", Data: []byte("10"), Version: 0}); err != nil {
		t.Fatal(err)
	}
	_, beforeStat, _ := c.Get("/a/b")
	lastZxid := s.z.tree.zxid
	c.Close()

	s = reopen(t, s, dir)
	c = s.Connect()
	defer c.Close()
	for path, want := range map[string]string{"/a": "10", "/a/b": "3", "/m": "m"} {
		got, _, err := c.Get(path)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, st, _ := c.Get("/a/b"); st != beforeStat {
		t.Errorf("stat of /a/b after restart %+v, before %+v", st, beforeStat)
	}
	for _, gone := range []string{"/a/gone", "/a/eph"} {
		if ok, _, _ := c.Exists(gone); ok {
			t.Errorf("%s survived the restart", gone)
		}
	}
	if ok, _, _ := c.Exists(seq); !ok {
		t.Errorf("sequential node %s lost", seq)
	}
	// Sequence numbers and zxids carry on from where they were.
	next, err := c.Create("/a/n-", nil, ModePersistentSequential)
	if err != nil || next <= seq {
		t.Errorf("next sequential name %q (%v) after %q", next, err, seq)
	}
	p, st, err := c.Get("/a/b")
	_ = p
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, "/later", "", ModePersistent)
	if _, later, _ := c.Get("/later"); later.Czxid <= lastZxid || later.Czxid <= st.Mzxid {
		t.Errorf("czxid %d after restart does not follow %d", later.Czxid, lastZxid)
	}
	kids, _, _ := c.Children("/a")
	if len(kids) != 3 { // b and two sequential nodes
		t.Errorf("children of /a after restart: %v", kids)
	}
}

func TestLocalStoreDropsTornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Connect()
	mustCreate(t, c, "/kept", "k", ModePersistent)
	c.Close()
	s.Close()
	path := filepath.Join(dir, localStoreFile)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Half a record, as a crash in the middle of a write leaves it.
	if _, err := f.WriteString(`1234abcd {"zxid":99,"nodes":[{"pa`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err = OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatalf("open with a torn tail: %v", err)
	}
	defer s.Close()
	c = s.Connect()
	defer c.Close()
	if got, _, err := c.Get("/kept"); err != nil || string(got) != "k" {
		t.Fatalf("/kept = %q, %v", got, err)
	}
	mustCreate(t, c, "/after", "a", ModePersistent)
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte(`"pa`+"\n")) || bytes.Count(data, []byte("\n")) != bytes.Count(data, []byte(" {")) {
		t.Errorf("journal not cut back to whole records:\n%s", data)
	}
}

func TestLocalStoreRefusesCorruptionBeforeTheEnd(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Connect()
	mustCreate(t, c, "/one", "1", ModePersistent)
	mustCreate(t, c, "/two", "2", ModePersistent)
	c.Close()
	s.Close()
	path := filepath.Join(dir, localStoreFile)
	data, _ := os.ReadFile(path)
	i := bytes.Index(data, []byte(`"/one"`))
	data[i+2] = 'X' // breaks the first record's checksum
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := OpenLocalStore(dir, nil); err == nil {
		s.Close()
		t.Fatal("a corrupt record followed by good ones was accepted")
	}
}

func TestLocalStoreCompacts(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Connect()
	mustCreate(t, c, "/n", "", ModePersistent)
	big := bytes.Repeat([]byte("x"), 64<<10)
	// Rewriting one node far past minCompactBytes must not grow the
	// journal without bound.
	for i := 0; i < 200; i++ {
		if _, err := c.Set("/n", big, -1); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	st, err := os.Stat(filepath.Join(dir, localStoreFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 5*minCompactBytes {
		t.Errorf("journal is %d bytes after 200 rewrites of one 64 KiB node", st.Size())
	}
	s = reopen(t, s, dir)
	c = s.Connect()
	defer c.Close()
	got, stat, err := c.Get("/n")
	if err != nil || !bytes.Equal(got, big) || stat.Version != 200 {
		t.Fatalf("after compaction and restart: %d bytes, version %d, %v", len(got), stat.Version, err)
	}
}

// mustCreate is zktest.MustCreate, which this package's own tests cannot
// import.
func mustCreate(t *testing.T, c Client, path string, data string, mode CreateMode) string {
	t.Helper()
	p, err := c.Create(path, []byte(data), mode)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	return p
}
