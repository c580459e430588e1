package zkstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
)

// LocalStore is the metadata store of a broker without ZooKeeper: the same
// znodes a ZooKeeper cluster keeps (topics, partition states, configs,
// admin requests, the producer id block), in an in-process tree made
// durable by a journal in the first log dir. A standalone broker runs the
// whole cluster path over it — registration, controller election, the
// controller's decisions, LeaderAndIsr and UpdateMetadata to itself — so
// that standalone and cluster mode differ in this store alone. Whatever a
// later feature keeps in ZooKeeper (ACLs, SCRAM credentials, quotas,
// transaction state pointers) is kept here too, by the same code.
//
// Only persistent znodes are journaled: ephemeral ones (the broker
// registration, /controller) belong to a session, and a session does not
// survive the process, exactly as a ZooKeeper session does not survive
// its expiry.
type LocalStore struct {
	z    *Mem
	path string
}

// localStoreFile is the journal's name in the first log dir.
const localStoreFile = "kbroker-metadata.journal"

// OpenLocalStore opens (creating when absent) the store in dir and replays
// its journal. A torn last record, left by a crash in the middle of a
// write, is dropped: the change it held was never acknowledged.
func OpenLocalStore(dir string, log *slog.Logger) (*LocalStore, error) {
	if log == nil {
		log = slog.Default()
	}
	path := filepath.Join(dir, localStoreFile)
	z := NewMem()
	j, err := openJournal(path, &z.tree, log)
	if err != nil {
		return nil, err
	}
	z.journal = j
	return &LocalStore{z: z, path: path}, nil
}

// Fresh reports whether the store holds nothing yet: a broker's first
// start, or its first start since it kept its metadata elsewhere.
func (s *LocalStore) Fresh() bool {
	s.z.mu.Lock()
	defer s.z.mu.Unlock()
	return len(s.z.tree.nodes) == 1
}

// Close closes the journal. Sessions on the store must have ended.
func (s *LocalStore) Close() error {
	s.z.mu.Lock()
	defer s.z.mu.Unlock()
	return s.z.journal.close()
}

// Connect opens a session on the store.
func (s *LocalStore) Connect() Client { return s.z.Connect() }

// journal records every committed change of a memTree as one line:
// "<crc32c hex> <json>\n", where the JSON carries the change's zxid and the
// new state of every persistent znode it touched (or its removal). Replay
// applies the lines in order; compaction rewrites the whole tree as one
// line when the journal has grown well past the tree's size.
type journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	log  *slog.Logger
	// size is the journal's length; compactAt the length that triggers
	// the next rewrite.
	size, compactAt int64
}

// journalRecord is one line's JSON.
type journalRecord struct {
	Zxid    int64           `json:"zxid"`
	Nodes   []journaledNode `json:"nodes,omitempty"`
	Deleted []string        `json:"deleted,omitempty"`
}

type journaledNode struct {
	Path         string `json:"path"`
	Data         []byte `json:"data,omitempty"`
	Stat         Stat   `json:"stat"`
	ChildCreates int32  `json:"child_creates,omitempty"`
}

// minCompactBytes keeps a small store from being rewritten on every change.
const minCompactBytes = 4 << 20

var crc32c = crc32.MakeTable(crc32.Castagnoli)

func openJournal(path string, t *memTree, log *slog.Logger) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	good, records, err := replayJournal(f, t)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if st, err := f.Stat(); err == nil && st.Size() > good {
		log.Warn("dropping a torn record at the end of the metadata journal", "path", path, "bytes", st.Size()-good)
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, err
		}
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	j := &journal{path: path, f: f, log: log, size: good}
	if records > 1 && good > minCompactBytes {
		if err := j.compact(t); err != nil {
			f.Close()
			return nil, err
		}
	}
	j.compactAt = max(minCompactBytes, 4*j.size)
	return j, nil
}

// replayJournal applies every intact record to t and returns the length of
// the intact prefix. A bad record before the end is corruption, not a torn
// write, and fails the open: guessing would hand out stale leader epochs.
func replayJournal(f *os.File, t *memTree) (good int64, records int, err error) {
	r := bufio.NewReaderSize(f, 1<<16)
	var pending error
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) == 0 && rerr == io.EOF {
			break
		}
		if rerr != nil && rerr != io.EOF {
			return 0, 0, rerr
		}
		rec, perr := parseJournalLine(line)
		if pending != nil {
			return 0, 0, fmt.Errorf("corrupt record at byte %d: %w", good, pending)
		}
		if perr != nil || rerr == io.EOF {
			// The last line may be torn; anything after it is corruption.
			pending = perr
			if pending == nil {
				pending = errors.New("record without end of line")
			}
			continue
		}
		applyJournalRecord(t, rec)
		good += int64(len(line))
		records++
	}
	linkChildren(t)
	return good, records, nil
}

func parseJournalLine(line []byte) (*journalRecord, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	sum, body, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return nil, errors.New("no checksum")
	}
	want, err := strconv.ParseUint(string(sum), 16, 32)
	if err != nil {
		return nil, fmt.Errorf("checksum %q: %w", sum, err)
	}
	if crc32.Checksum(body, crc32c) != uint32(want) {
		return nil, errors.New("checksum mismatch")
	}
	var rec journalRecord
	if err := json.Unmarshal(body, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func applyJournalRecord(t *memTree, rec *journalRecord) {
	for _, p := range rec.Deleted {
		delete(t.nodes, p)
	}
	for _, n := range rec.Nodes {
		t.nodes[n.Path] = &memNode{data: n.Data, stat: n.Stat, childCreates: n.ChildCreates, children: map[string]struct{}{}}
	}
	t.zxid = max(t.zxid, rec.Zxid)
}

// linkChildren rebuilds every node's child set from the paths, which the
// journal does not repeat.
func linkChildren(t *memTree) {
	for _, n := range t.nodes {
		n.children = map[string]struct{}{}
	}
	for p := range t.nodes {
		if p == "/" {
			continue
		}
		parent, name := parentOf(p)
		if pn, ok := t.nodes[parent]; ok {
			pn.children[name] = struct{}{}
		}
	}
	for _, n := range t.nodes {
		n.stat.NumChildren = int32(len(n.children))
	}
}

// record makes one committed change durable: the touched persistent nodes
// of t (the tree after the change) are appended and synced.
func (j *journal) record(t *memTree, events []nodeEvent) error {
	rec := journalRecord{Zxid: t.zxid}
	seen := map[string]bool{}
	for _, ev := range events {
		if seen[ev.path] {
			continue
		}
		seen[ev.path] = true
		n, ok := t.nodes[ev.path]
		switch {
		case !ok:
			rec.Deleted = append(rec.Deleted, ev.path)
		case n.stat.EphemeralOwner == 0:
			rec.Nodes = append(rec.Nodes, journaledNode{Path: ev.path, Data: n.data, Stat: n.stat, ChildCreates: n.childCreates})
		}
	}
	// A change may touch only ephemeral nodes; its zxid is still written,
	// so that zxids (and the broker epochs taken from them) keep growing
	// across restarts.
	if err := j.append(&rec); err != nil {
		return err
	}
	if j.size >= j.compactAt {
		if err := j.compact(t); err != nil {
			j.log.Warn("cannot compact the metadata journal; it keeps growing", "path", j.path, "err", err)
		}
		j.compactAt = max(minCompactBytes, 4*j.size)
	}
	return nil
}

func encodeJournalLine(rec *journalRecord) ([]byte, error) {
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, len(body)+10)
	line = strconv.AppendUint(line, uint64(crc32.Checksum(body, crc32c)), 16)
	line = append(line, ' ')
	line = append(line, body...)
	return append(line, '\n'), nil
}

func (j *journal) append(rec *journalRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return ErrConnectionClosed
	}
	line, err := encodeJournalLine(rec)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(line); err != nil {
		// Cut back to the last whole record, so a later append does not
		// follow half a line.
		_ = j.f.Truncate(j.size)
		_, _ = j.f.Seek(j.size, io.SeekStart)
		return fmt.Errorf("metadata journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("metadata journal: %w", err)
	}
	j.size += int64(len(line))
	return nil
}

// compact replaces the journal with one record holding every persistent
// node of t: written to a temporary file, synced, renamed over the journal.
func (j *journal) compact(t *memTree) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec := journalRecord{Zxid: t.zxid}
	paths := make([]string, 0, len(t.nodes))
	for p, n := range t.nodes {
		if n.stat.EphemeralOwner == 0 {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		n := t.nodes[p]
		rec.Nodes = append(rec.Nodes, journaledNode{Path: p, Data: n.data, Stat: n.stat, ChildCreates: n.childCreates})
	}
	line, err := encodeJournalLine(&rec)
	if err != nil {
		return err
	}
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		f.Close()
		return err
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	j.f.Close()
	j.f = f
	j.size = int64(len(line))
	return nil
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// Path is the journal's file.
func (s *LocalStore) Path() string { return s.path }
