package controller

import (
	"errors"
	"fmt"
)

// zkClient is the part of ZooKeeper the controller and broker registration
// use. Two implementations pass the same suite (zk_suite_test.go): zkConn over
// github.com/go-zookeeper/zk and memZK's in-memory connections.
//
// Semantics follow ZooKeeper: version -1 means "any version"; a watch fires
// at most once; ephemeral nodes belong to the session that created them and
// vanish when it ends; a sequential create appends a per-parent
// counter of child creations formatted %010d.
type zkClient interface {
	Create(path string, data []byte, mode createMode) (string, error)
	Get(path string) ([]byte, znodeStat, error)
	GetW(path string) ([]byte, znodeStat, <-chan zkEvent, error)
	Exists(path string) (bool, znodeStat, error)
	// ExistsW arms a watch even when the node does not exist, so the caller
	// learns of its creation.
	ExistsW(path string) (bool, znodeStat, <-chan zkEvent, error)
	Set(path string, data []byte, version int32) (znodeStat, error)
	Delete(path string, version int32) error
	Children(path string) ([]string, znodeStat, error)
	ChildrenW(path string) ([]string, znodeStat, <-chan zkEvent, error)
	// Multi applies every op or none. On failure the error is the first
	// failing op's error, wrapped in a *multiError naming its index.
	Multi(ops ...zkOp) ([]zkOpResult, error)
	// Session reports the current session. It changes after an expiry,
	// when the client has established a new session.
	Session() zkSession
	// SessionChanged is signalled (coalesced, never blocking the client)
	// whenever Session() may have changed.
	SessionChanged() <-chan struct{}
	Close()
}

type createMode int

const (
	modePersistent createMode = iota
	modeEphemeral
	modePersistentSequential
	modeEphemeralSequential
)

func (m createMode) ephemeral() bool {
	return m == modeEphemeral || m == modeEphemeralSequential
}

func (m createMode) sequential() bool {
	return m == modePersistentSequential || m == modeEphemeralSequential
}

// znodeStat is the subset of ZooKeeper's Stat that Kafka reads: Version for
// conditional writes, Czxid as the broker epoch (KIP-380), EphemeralOwner to
// recognise our own registration.
type znodeStat struct {
	Czxid          int64
	Mzxid          int64
	Version        int32
	Cversion       int32
	EphemeralOwner int64
	NumChildren    int32
}

type zkEventType int

const (
	eventNodeCreated zkEventType = iota + 1
	eventNodeDeleted
	eventNodeDataChanged
	eventNodeChildrenChanged
	// eventNotWatching: the watch was dropped without a node event, because
	// the session expired or the client closed. Err says why.
	eventNotWatching
)

func (t zkEventType) String() string {
	switch t {
	case eventNodeCreated:
		return "NodeCreated"
	case eventNodeDeleted:
		return "NodeDeleted"
	case eventNodeDataChanged:
		return "NodeDataChanged"
	case eventNodeChildrenChanged:
		return "NodeChildrenChanged"
	case eventNotWatching:
		return "NotWatching"
	}
	return fmt.Sprintf("zkEventType(%d)", int(t))
}

// zkEvent is delivered once on a watch channel, which is then closed.
type zkEvent struct {
	Type zkEventType
	Path string
	Err  error
}

type sessionState int

const (
	sessionConnecting sessionState = iota
	sessionConnected
	sessionExpired
	sessionClosed
)

func (s sessionState) String() string {
	switch s {
	case sessionConnecting:
		return "connecting"
	case sessionConnected:
		return "connected"
	case sessionExpired:
		return "expired"
	case sessionClosed:
		return "closed"
	}
	return fmt.Sprintf("sessionState(%d)", int(s))
}

type zkSession struct {
	ID    int64
	State sessionState
}

// zkOp is one operation of a Multi: *opCreate, *opSet, *opDelete, *opCheck.
type zkOp interface{ opPath() string }

type opCreate struct {
	Path string
	Data []byte
	Mode createMode
}

type opSet struct {
	Path    string
	Data    []byte
	Version int32
}

type opDelete struct {
	Path    string
	Version int32
}

// opCheck fails the multi unless Path's data version is Version. The
// controller prefixes its writes with a check of /controller_epoch.
type opCheck struct {
	Path    string
	Version int32
}

func (o *opCreate) opPath() string { return o.Path }
func (o *opSet) opPath() string    { return o.Path }
func (o *opDelete) opPath() string { return o.Path }
func (o *opCheck) opPath() string  { return o.Path }

// zkOpResult is one op's outcome in a successful Multi: the created path
// for creates, the new stat for sets.
type zkOpResult struct {
	Path string
	Stat znodeStat
}

// Errors, matched with errors.Is. Both implementations return these.
var (
	errNoNode                  = errors.New("zk: node does not exist")
	errNodeExists              = errors.New("zk: node already exists")
	errBadVersion              = errors.New("zk: version conflict")
	errNotEmpty                = errors.New("zk: node has children")
	errNoChildrenForEphemerals = errors.New("zk: ephemeral nodes may not have children")
	errSessionExpired          = errors.New("zk: session expired")
	errConnectionClosed        = errors.New("zk: connection closed")
	errBadArguments            = errors.New("zk: invalid arguments")
)

// multiError tells which op of a Multi failed.
type multiError struct {
	Index int
	Op    zkOp
	Err   error
}

func (e *multiError) Error() string {
	return fmt.Sprintf("zk multi op %d (%T %s): %v", e.Index, e.Op, e.Op.opPath(), e.Err)
}

func (e *multiError) Unwrap() error { return e.Err }

// sequentialName is ZooKeeper's name for a sequential child: the prefix and
// a per-parent counter, zero-padded to 10 digits.
func sequentialName(prefix string, seq int32) string {
	return fmt.Sprintf("%s%010d", prefix, seq)
}
