package zkstore

import (
	"fmt"
	"sort"
	"time"
)

// MemConn is one client session of a Mem. Its fields are guarded by
// Mem.mu.
type MemConn struct {
	z       *Mem
	session Session
	changed chan struct{}
}

var _ Client = (*MemConn)(nil)

func (c *MemConn) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// usableLocked is the error every operation returns when the session is
// not connected.
func (c *MemConn) usableLocked() error {
	switch c.session.State {
	case SessionConnected:
		return nil
	case SessionExpired:
		return ErrSessionExpired
	default:
		return ErrConnectionClosed
	}
}

func (c *MemConn) Session() Session {
	c.z.mu.Lock()
	defer c.z.mu.Unlock()
	s := c.session
	if s.State == SessionConnected {
		s.LastHeard = time.Now()
	}
	return s
}

func (c *MemConn) SessionChanged() <-chan struct{} { return c.changed }

// Close ends the session: its ephemeral nodes are deleted at once, as when
// a ZooKeeper client closes cleanly.
func (c *MemConn) Close() {
	c.z.mu.Lock()
	defer c.z.mu.Unlock()
	if c.session.State == SessionClosed {
		return
	}
	c.z.endSessionLocked(c, ErrConnectionClosed, SessionClosed)
	c.signal()
}

func (c *MemConn) Create(path string, data []byte, mode CreateMode) (string, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return "", err
	}
	if z.journal != nil {
		res, err := c.commitLocked(&OpCreate{Path: path, Data: data, Mode: mode})
		return res.Path, err
	}
	p, events, err := z.tree.create(path, data, mode, c.session.ID)
	if err != nil {
		return "", err
	}
	z.fireLocked(events)
	return p, nil
}

func (c *MemConn) get(path string, watch bool) ([]byte, Stat, <-chan Event, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, Stat{}, nil, err
	}
	n, ok := z.tree.nodes[path]
	if !ok {
		return nil, Stat{}, nil, ErrNoNode
	}
	var ch <-chan Event
	if watch {
		ch = z.watchLocked(c, path, watchData)
	}
	return cloneBytes(n.data), n.stat, ch, nil
}

func (c *MemConn) Get(path string) ([]byte, Stat, error) {
	d, s, _, err := c.get(path, false)
	return d, s, err
}

func (c *MemConn) GetW(path string) ([]byte, Stat, <-chan Event, error) {
	return c.get(path, true)
}

func (c *MemConn) exists(path string, watch bool) (bool, Stat, <-chan Event, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return false, Stat{}, nil, err
	}
	n, ok := z.tree.nodes[path]
	var ch <-chan Event
	if watch {
		// As ZooKeeper: a data watch on an existing node, an existence
		// watch (fires on creation) on a missing one.
		kind := watchExist
		if ok {
			kind = watchData
		}
		ch = z.watchLocked(c, path, kind)
	}
	if !ok {
		return false, Stat{}, ch, nil
	}
	return true, n.stat, ch, nil
}

func (c *MemConn) Exists(path string) (bool, Stat, error) {
	ok, s, _, err := c.exists(path, false)
	return ok, s, err
}

func (c *MemConn) ExistsW(path string) (bool, Stat, <-chan Event, error) {
	return c.exists(path, true)
}

func (c *MemConn) Set(path string, data []byte, version int32) (Stat, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return Stat{}, err
	}
	if z.journal != nil {
		res, err := c.commitLocked(&OpSet{Path: path, Data: data, Version: version})
		return res.Stat, err
	}
	st, events, err := z.tree.set(path, data, version)
	if err != nil {
		return Stat{}, err
	}
	z.fireLocked(events)
	return st, nil
}

func (c *MemConn) Delete(path string, version int32) error {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return err
	}
	if z.journal != nil {
		_, err := c.commitLocked(&OpDelete{Path: path, Version: version})
		return err
	}
	events, err := z.tree.delete(path, version)
	if err != nil {
		return err
	}
	z.fireLocked(events)
	return nil
}

func (c *MemConn) children(path string, watch bool) ([]string, Stat, <-chan Event, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, Stat{}, nil, err
	}
	n, ok := z.tree.nodes[path]
	if !ok {
		return nil, Stat{}, nil, ErrNoNode
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	// ZooKeeper returns children unordered; sorted output keeps tests that
	// forget to sort deterministic here and caught by the real server.
	sort.Strings(names)
	var ch <-chan Event
	if watch {
		ch = z.watchLocked(c, path, watchChild)
	}
	return names, n.stat, ch, nil
}

func (c *MemConn) Children(path string) ([]string, Stat, error) {
	names, s, _, err := c.children(path, false)
	return names, s, err
}

func (c *MemConn) ChildrenW(path string) ([]string, Stat, <-chan Event, error) {
	return c.children(path, true)
}

// Multi applies the ops to a copy of the tree and keeps the copy only if
// every op succeeded (and, with a journal, was recorded), so a failed multi
// changes nothing and fires nothing.
func (c *MemConn) Multi(ops ...Op) ([]OpResult, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, err
	}
	return c.applyLocked(ops)
}

// commitLocked applies one op the way Multi does, for a journaled tree,
// and returns the op's own error rather than a MultiError.
func (c *MemConn) commitLocked(op Op) (OpResult, error) {
	res, err := c.applyLocked([]Op{op})
	if me, ok := err.(*MultiError); ok {
		return OpResult{}, me.Err
	}
	if err != nil {
		return OpResult{}, err
	}
	return res[0], nil
}

func (c *MemConn) applyLocked(ops []Op) ([]OpResult, error) {
	z := c.z
	t := z.tree.clone()
	t.zxid++
	t.inMulti = true
	results := make([]OpResult, len(ops))
	var events []nodeEvent
	for i, op := range ops {
		var ev []nodeEvent
		var err error
		switch o := op.(type) {
		case *OpCreate:
			results[i].Path, ev, err = t.create(o.Path, o.Data, o.Mode, c.session.ID)
		case *OpSet:
			results[i].Stat, ev, err = t.set(o.Path, o.Data, o.Version)
		case *OpDelete:
			ev, err = t.delete(o.Path, o.Version)
		case *OpCheck:
			err = t.check(o.Path, o.Version)
		default:
			err = fmt.Errorf("%w: unknown op %T", errBadArguments, op)
		}
		if err != nil {
			return nil, &MultiError{Index: i, Op: op, Err: err}
		}
		events = append(events, ev...)
	}
	t.inMulti = false
	if z.journal != nil {
		if err := z.journal.record(&t, events); err != nil {
			return nil, err
		}
	}
	z.tree = t
	z.fireLocked(events)
	return results, nil
}

// Expire ends this connection's session as the server would, see
// (*Mem).Expire.
func (c *MemConn) Expire() { c.z.Expire(c) }
