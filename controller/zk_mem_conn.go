package controller

import (
	"fmt"
	"sort"
)

// memConn is one client session of a memZK. Its fields are guarded by
// memZK.mu.
type memConn struct {
	z       *memZK
	session zkSession
	changed chan struct{}
}

var _ zkClient = (*memConn)(nil)

func (c *memConn) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// usableLocked is the error every operation returns when the session is
// not connected.
func (c *memConn) usableLocked() error {
	switch c.session.State {
	case sessionConnected:
		return nil
	case sessionExpired:
		return errSessionExpired
	default:
		return errConnectionClosed
	}
}

func (c *memConn) Session() zkSession {
	c.z.mu.Lock()
	defer c.z.mu.Unlock()
	return c.session
}

func (c *memConn) SessionChanged() <-chan struct{} { return c.changed }

// Close ends the session: its ephemeral nodes are deleted at once, as when
// a ZooKeeper client closes cleanly.
func (c *memConn) Close() {
	c.z.mu.Lock()
	defer c.z.mu.Unlock()
	if c.session.State == sessionClosed {
		return
	}
	c.z.endSessionLocked(c, errConnectionClosed, sessionClosed)
	c.signal()
}

func (c *memConn) Create(path string, data []byte, mode createMode) (string, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return "", err
	}
	if z.journal != nil {
		res, err := c.commitLocked(&opCreate{Path: path, Data: data, Mode: mode})
		return res.Path, err
	}
	p, events, err := z.tree.create(path, data, mode, c.session.ID)
	if err != nil {
		return "", err
	}
	z.fireLocked(events)
	return p, nil
}

func (c *memConn) get(path string, watch bool) ([]byte, znodeStat, <-chan zkEvent, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, znodeStat{}, nil, err
	}
	n, ok := z.tree.nodes[path]
	if !ok {
		return nil, znodeStat{}, nil, errNoNode
	}
	var ch <-chan zkEvent
	if watch {
		ch = z.watchLocked(c, path, watchData)
	}
	return cloneBytes(n.data), n.stat, ch, nil
}

func (c *memConn) Get(path string) ([]byte, znodeStat, error) {
	d, s, _, err := c.get(path, false)
	return d, s, err
}

func (c *memConn) GetW(path string) ([]byte, znodeStat, <-chan zkEvent, error) {
	return c.get(path, true)
}

func (c *memConn) exists(path string, watch bool) (bool, znodeStat, <-chan zkEvent, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return false, znodeStat{}, nil, err
	}
	n, ok := z.tree.nodes[path]
	var ch <-chan zkEvent
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
		return false, znodeStat{}, ch, nil
	}
	return true, n.stat, ch, nil
}

func (c *memConn) Exists(path string) (bool, znodeStat, error) {
	ok, s, _, err := c.exists(path, false)
	return ok, s, err
}

func (c *memConn) ExistsW(path string) (bool, znodeStat, <-chan zkEvent, error) {
	return c.exists(path, true)
}

func (c *memConn) Set(path string, data []byte, version int32) (znodeStat, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return znodeStat{}, err
	}
	if z.journal != nil {
		res, err := c.commitLocked(&opSet{Path: path, Data: data, Version: version})
		return res.Stat, err
	}
	st, events, err := z.tree.set(path, data, version)
	if err != nil {
		return znodeStat{}, err
	}
	z.fireLocked(events)
	return st, nil
}

func (c *memConn) Delete(path string, version int32) error {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return err
	}
	if z.journal != nil {
		_, err := c.commitLocked(&opDelete{Path: path, Version: version})
		return err
	}
	events, err := z.tree.delete(path, version)
	if err != nil {
		return err
	}
	z.fireLocked(events)
	return nil
}

func (c *memConn) children(path string, watch bool) ([]string, znodeStat, <-chan zkEvent, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, znodeStat{}, nil, err
	}
	n, ok := z.tree.nodes[path]
	if !ok {
		return nil, znodeStat{}, nil, errNoNode
	}
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	// ZooKeeper returns children unordered; sorted output keeps tests that
	// forget to sort deterministic here and caught by the real server.
	sort.Strings(names)
	var ch <-chan zkEvent
	if watch {
		ch = z.watchLocked(c, path, watchChild)
	}
	return names, n.stat, ch, nil
}

func (c *memConn) Children(path string) ([]string, znodeStat, error) {
	names, s, _, err := c.children(path, false)
	return names, s, err
}

func (c *memConn) ChildrenW(path string) ([]string, znodeStat, <-chan zkEvent, error) {
	return c.children(path, true)
}

// Multi applies the ops to a copy of the tree and keeps the copy only if
// every op succeeded (and, with a journal, was recorded), so a failed multi
// changes nothing and fires nothing.
func (c *memConn) Multi(ops ...zkOp) ([]zkOpResult, error) {
	z := c.z
	z.mu.Lock()
	defer z.mu.Unlock()
	if err := c.usableLocked(); err != nil {
		return nil, err
	}
	return c.applyLocked(ops)
}

// commitLocked applies one op the way Multi does, for a journaled tree,
// and returns the op's own error rather than a multiError.
func (c *memConn) commitLocked(op zkOp) (zkOpResult, error) {
	res, err := c.applyLocked([]zkOp{op})
	if me, ok := err.(*multiError); ok {
		return zkOpResult{}, me.Err
	}
	if err != nil {
		return zkOpResult{}, err
	}
	return res[0], nil
}

func (c *memConn) applyLocked(ops []zkOp) ([]zkOpResult, error) {
	z := c.z
	t := z.tree.clone()
	t.zxid++
	t.inMulti = true
	results := make([]zkOpResult, len(ops))
	var events []nodeEvent
	for i, op := range ops {
		var ev []nodeEvent
		var err error
		switch o := op.(type) {
		case *opCreate:
			results[i].Path, ev, err = t.create(o.Path, o.Data, o.Mode, c.session.ID)
		case *opSet:
			results[i].Stat, ev, err = t.set(o.Path, o.Data, o.Version)
		case *opDelete:
			ev, err = t.delete(o.Path, o.Version)
		case *opCheck:
			err = t.check(o.Path, o.Version)
		default:
			err = fmt.Errorf("%w: unknown op %T", errBadArguments, op)
		}
		if err != nil {
			return nil, &multiError{Index: i, Op: op, Err: err}
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
