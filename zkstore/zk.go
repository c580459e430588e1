package zkstore

import (
	"errors"
	"fmt"
	"time"
)

// Client is the part of ZooKeeper the controller and broker registration
// use. Two implementations pass the same suite (zk_suite_test.go): Conn over
// github.com/go-zookeeper/zk and Mem's in-memory connections.
//
// Semantics follow ZooKeeper: version -1 means "any version"; a watch fires
// at most once; ephemeral nodes belong to the session that created them and
// vanish when it ends; a sequential create appends a per-parent
// counter of child creations formatted %010d.
type Client interface {
	Create(path string, data []byte, mode CreateMode) (string, error)
	Get(path string) ([]byte, Stat, error)
	GetW(path string) ([]byte, Stat, <-chan Event, error)
	Exists(path string) (bool, Stat, error)
	// ExistsW arms a watch even when the node does not exist, so the caller
	// learns of its creation.
	ExistsW(path string) (bool, Stat, <-chan Event, error)
	Set(path string, data []byte, version int32) (Stat, error)
	Delete(path string, version int32) error
	Children(path string) ([]string, Stat, error)
	ChildrenW(path string) ([]string, Stat, <-chan Event, error)
	// Multi applies every op or none. On failure the error is the first
	// failing op's error, wrapped in a *MultiError naming its index.
	Multi(ops ...Op) ([]OpResult, error)
	// Session reports the current session. It changes after an expiry,
	// when the client has established a new session.
	Session() Session
	// SessionChanged is signalled (coalesced, never blocking the client)
	// whenever Session() may have changed.
	SessionChanged() <-chan struct{}
	Close()
}

// CreateMode is a znode's kind: persistent or ephemeral, optionally
// sequential.
type CreateMode int

const (
	ModePersistent CreateMode = iota
	ModeEphemeral
	ModePersistentSequential
	modeEphemeralSequential
)

func (m CreateMode) ephemeral() bool {
	return m == ModeEphemeral || m == modeEphemeralSequential
}

func (m CreateMode) sequential() bool {
	return m == ModePersistentSequential || m == modeEphemeralSequential
}

// Stat is the subset of ZooKeeper's Stat that Kafka reads: Version for
// conditional writes, Czxid as the broker epoch (KIP-380), EphemeralOwner to
// recognise our own registration.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Version        int32
	Cversion       int32
	EphemeralOwner int64
	NumChildren    int32
}

// EventType is what a watch saw.
type EventType int

const (
	EventNodeCreated EventType = iota + 1
	EventNodeDeleted
	EventNodeDataChanged
	EventNodeChildrenChanged
	// EventNotWatching: the watch was dropped without a node event, because
	// the session expired or the client closed. Err says why.
	EventNotWatching
)

func (t EventType) String() string {
	switch t {
	case EventNodeCreated:
		return "NodeCreated"
	case EventNodeDeleted:
		return "NodeDeleted"
	case EventNodeDataChanged:
		return "NodeDataChanged"
	case EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	case EventNotWatching:
		return "NotWatching"
	}
	return fmt.Sprintf("zkEventType(%d)", int(t))
}

// Event is delivered once on a watch channel, which is then closed.
type Event struct {
	Type EventType
	Path string
	Err  error
}

// SessionState is a client session's state.
type SessionState int

const (
	sessionConnecting SessionState = iota
	SessionConnected
	SessionExpired
	SessionClosed
)

func (s SessionState) String() string {
	switch s {
	case sessionConnecting:
		return "connecting"
	case SessionConnected:
		return "connected"
	case SessionExpired:
		return "expired"
	case SessionClosed:
		return "closed"
	}
	return fmt.Sprintf("sessionState(%d)", int(s))
}

// Session is a client's current session.
type Session struct {
	ID    int64
	State SessionState
	// LastHeard is when the client last received anything from the
	// server: the server cannot have heard from it much later either, so
	// once the session timeout has passed since, the session has expired
	// or is about to, although the client learns so only when it gets
	// through again. The zero time when the client cannot tell.
	LastHeard time.Time
}

// Op is one operation of a Multi: *opCreate, *opSet, *opDelete, *opCheck.
type Op interface{ opPath() string }

// OpCreate creates Path in a Multi.
type OpCreate struct {
	Path string
	Data []byte
	Mode CreateMode
}

// OpSet sets Path's data in a Multi, if at Version (-1: any).
type OpSet struct {
	Path    string
	Data    []byte
	Version int32
}

// OpDelete deletes Path in a Multi, if at Version (-1: any).
type OpDelete struct {
	Path    string
	Version int32
}

// OpCheck fails the multi unless Path's data version is Version. The
// controller prefixes its writes with a check of /controller_epoch.
type OpCheck struct {
	Path    string
	Version int32
}

func (o *OpCreate) opPath() string { return o.Path }
func (o *OpSet) opPath() string    { return o.Path }
func (o *OpDelete) opPath() string { return o.Path }
func (o *OpCheck) opPath() string  { return o.Path }

// OpResult is one op's outcome in a successful Multi: the created path
// for creates, the new stat for sets.
type OpResult struct {
	Path string
	Stat Stat
}

// Errors, matched with errors.Is. Both implementations return these.
var (
	ErrNoNode                  = errors.New("zk: node does not exist")
	ErrNodeExists              = errors.New("zk: node already exists")
	ErrBadVersion              = errors.New("zk: version conflict")
	ErrNotEmpty                = errors.New("zk: node has children")
	ErrNoChildrenForEphemerals = errors.New("zk: ephemeral nodes may not have children")
	ErrSessionExpired          = errors.New("zk: session expired")
	ErrConnectionClosed        = errors.New("zk: connection closed")
	errBadArguments            = errors.New("zk: invalid arguments")
)

// MultiError tells which op of a Multi failed.
type MultiError struct {
	Index int
	Op    Op
	Err   error
}

func (e *MultiError) Error() string {
	return fmt.Sprintf("zk multi op %d (%T %s): %v", e.Index, e.Op, e.Op.opPath(), e.Err)
}

func (e *MultiError) Unwrap() error { return e.Err }

// sequentialName is ZooKeeper's name for a sequential child: the prefix and
// a per-parent counter, zero-padded to 10 digits.
func sequentialName(prefix string, seq int32) string {
	return fmt.Sprintf("%s%010d", prefix, seq)
}
