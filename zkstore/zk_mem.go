package zkstore

import (
	"maps"
	"sort"
	"strings"
	"sync"
	"time"
)

// Mem is ZooKeeper in one process: one data tree, any number of sessions
// (MemConn). It keeps ZooKeeper's semantics that the controller depends on:
// data and child versions, czxid/mzxid from one zxid counter, ephemeral
// nodes owned by a session, sequential names from the parent's cversion,
// one-shot watches, atomic multi. Unit tests use it bare, as a ZooKeeper
// ensemble they can expire and disconnect; a standalone broker uses it
// with a journal (LocalStore), as its metadata store.
//
// Lock: Mem.mu guards everything, including every MemConn's state.
// Watch channels are buffered (1) and written once, so firing them under
// mu never blocks.
type Mem struct {
	mu          sync.Mutex
	tree        memTree
	nextSession int64
	watches     []*memWatch
	// journal, when set, makes every change durable before it is applied:
	// a change the journal cannot record fails and changes nothing.
	journal *journal
}

type memTree struct {
	nodes map[string]*memNode
	zxid  int64
	// inMulti: a multi is one ZooKeeper transaction, so all its ops share
	// the one zxid taken when it started.
	inMulti bool
}

func (t *memTree) nextZxid() int64 {
	if !t.inMulti {
		t.zxid++
	}
	return t.zxid
}

type memNode struct {
	data     []byte
	stat     Stat
	children map[string]struct{}
	// childCreates numbers sequential children. ZooKeeper 3.8 bumps the
	// child version on creates and deletes, but the sequence number it
	// appends only counts creates (observed against the real server; the
	// shared suite pins it).
	childCreates int32
}

type watchKind int

const (
	watchData watchKind = iota
	watchExist
	watchChild
)

type memWatch struct {
	conn *MemConn
	path string
	kind watchKind
	ch   chan Event
}

// nodeEvent is a change the tree made; watches are fired after the change
// is committed.
type nodeEvent struct {
	typ  EventType
	path string
}

// NewMem is an empty ensemble holding only the root.
func NewMem() *Mem {
	z := &Mem{tree: memTree{nodes: map[string]*memNode{}}}
	z.tree.nodes["/"] = &memNode{children: map[string]struct{}{}}
	return z
}

// Connect opens a new session.
func (z *Mem) Connect() *MemConn {
	z.mu.Lock()
	defer z.mu.Unlock()
	c := &MemConn{z: z, changed: make(chan struct{}, 1)}
	z.nextSession++
	c.session = Session{ID: z.nextSession, State: SessionConnected}
	return c
}

// Expire ends c's session as ZooKeeper does when it times out: c's
// ephemeral nodes go (firing other sessions' watches), c's watches end with
// ErrSessionExpired. Like go-zookeeper, the client then establishes a new
// session by itself; both transitions are signalled on SessionChanged.
func (z *Mem) Expire(c *MemConn) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.endSessionLocked(c, ErrSessionExpired, SessionExpired)
	c.signal()
	z.nextSession++
	c.session = Session{ID: z.nextSession, State: SessionConnected}
	c.signal()
}

// Disconnect and Reconnect model a connection loss that the session
// survives: operations fail meanwhile, ephemeral nodes and watches stay.
func (z *Mem) Disconnect(c *MemConn) { z.setState(c, sessionConnecting) }

// Reconnect ends a Disconnect.
func (z *Mem) Reconnect(c *MemConn) { z.setState(c, SessionConnected) }

func (z *Mem) setState(c *MemConn, s SessionState) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if c.session.State == SessionConnected && s != SessionConnected {
		c.session.LastHeard = time.Now()
	}
	c.session.State = s
	c.signal()
}

func (z *Mem) endSessionLocked(c *MemConn, why error, state SessionState) {
	id := c.session.ID
	var owned []string
	for p, n := range z.tree.nodes {
		if n.stat.EphemeralOwner == id {
			owned = append(owned, p)
		}
	}
	// Deepest first is not needed (ephemerals have no children), but a
	// stable order keeps zxids deterministic.
	sort.Strings(owned)
	var events []nodeEvent
	for _, p := range owned {
		ev, err := z.tree.delete(p, -1)
		if err == nil {
			events = append(events, ev...)
		}
	}
	kept := z.watches[:0]
	for _, w := range z.watches {
		if w.conn == c {
			w.ch <- Event{Type: EventNotWatching, Path: w.path, Err: why}
			close(w.ch)
			continue
		}
		kept = append(kept, w)
	}
	z.watches = kept
	c.session.State = state
	z.fireLocked(events)
}

func (z *Mem) fireLocked(events []nodeEvent) {
	for _, ev := range events {
		var kinds []watchKind
		switch ev.typ {
		case EventNodeCreated:
			kinds = []watchKind{watchExist}
		case EventNodeDataChanged:
			kinds = []watchKind{watchExist, watchData}
		case EventNodeChildrenChanged:
			kinds = []watchKind{watchChild}
		case EventNodeDeleted:
			kinds = []watchKind{watchExist, watchData, watchChild}
		}
		kept := z.watches[:0]
		for _, w := range z.watches {
			if w.path == ev.path && containsKind(kinds, w.kind) {
				w.ch <- Event{Type: ev.typ, Path: ev.path}
				close(w.ch)
				continue
			}
			kept = append(kept, w)
		}
		z.watches = kept
	}
}

func containsKind(kinds []watchKind, k watchKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func (z *Mem) watchLocked(c *MemConn, path string, kind watchKind) <-chan Event {
	w := &memWatch{conn: c, path: path, kind: kind, ch: make(chan Event, 1)}
	z.watches = append(z.watches, w)
	return w.ch
}

func parentOf(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '/')
	if i == 0 {
		return "/", path[1:]
	}
	return path[:i], path[i+1:]
}

func validPath(path string) bool {
	if path == "/" {
		return true
	}
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//") {
		return false
	}
	return true
}

func (t *memTree) create(path string, data []byte, mode CreateMode, session int64) (string, []nodeEvent, error) {
	if !validPath(path) || path == "/" {
		return "", nil, errBadArguments
	}
	parentPath, _ := parentOf(path)
	parent, ok := t.nodes[parentPath]
	if !ok {
		return "", nil, ErrNoNode
	}
	if parent.stat.EphemeralOwner != 0 {
		return "", nil, ErrNoChildrenForEphemerals
	}
	if mode.sequential() {
		path = sequentialName(path, parent.childCreates)
	}
	if _, exists := t.nodes[path]; exists {
		return "", nil, ErrNodeExists
	}
	zxid := t.nextZxid()
	n := &memNode{data: cloneBytes(data), children: map[string]struct{}{}}
	n.stat.Czxid, n.stat.Mzxid = zxid, zxid
	if mode.ephemeral() {
		n.stat.EphemeralOwner = session
	}
	t.nodes[path] = n
	_, name := parentOf(path)
	parent.children[name] = struct{}{}
	parent.stat.Cversion++
	parent.childCreates++
	parent.stat.NumChildren = int32(len(parent.children))
	return path, []nodeEvent{{EventNodeCreated, path}, {EventNodeChildrenChanged, parentPath}}, nil
}

func (t *memTree) set(path string, data []byte, version int32) (Stat, []nodeEvent, error) {
	n, ok := t.nodes[path]
	if !ok {
		return Stat{}, nil, ErrNoNode
	}
	if version != -1 && version != n.stat.Version {
		return Stat{}, nil, ErrBadVersion
	}
	n.data = cloneBytes(data)
	n.stat.Version++
	n.stat.Mzxid = t.nextZxid()
	return n.stat, []nodeEvent{{EventNodeDataChanged, path}}, nil
}

func (t *memTree) delete(path string, version int32) ([]nodeEvent, error) {
	if path == "/" {
		return nil, errBadArguments
	}
	n, ok := t.nodes[path]
	if !ok {
		return nil, ErrNoNode
	}
	if version != -1 && version != n.stat.Version {
		return nil, ErrBadVersion
	}
	if len(n.children) > 0 {
		return nil, ErrNotEmpty
	}
	t.nextZxid()
	delete(t.nodes, path)
	parentPath, name := parentOf(path)
	parent := t.nodes[parentPath]
	delete(parent.children, name)
	parent.stat.Cversion++
	parent.stat.NumChildren = int32(len(parent.children))
	return []nodeEvent{{EventNodeDeleted, path}, {EventNodeChildrenChanged, parentPath}}, nil
}

func (t *memTree) check(path string, version int32) error {
	n, ok := t.nodes[path]
	if !ok {
		return ErrNoNode
	}
	if version != -1 && version != n.stat.Version {
		return ErrBadVersion
	}
	return nil
}

// clone copies the tree deeply enough that a failed multi can be dropped.
func (t *memTree) clone() memTree {
	c := memTree{nodes: make(map[string]*memNode, len(t.nodes)), zxid: t.zxid}
	for p, n := range t.nodes {
		cp := *n
		cp.children = maps.Clone(n.children)
		c.nodes[p] = &cp
	}
	return c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
