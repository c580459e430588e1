package zkstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Conn is Client over a real ensemble (github.com/go-zookeeper/zk).
// A chroot from zookeeper.connect ("h1:2181,h2:2181/kafka") is applied
// here: callers use Kafka's absolute paths, the server sees them under the
// chroot, and paths coming back (created names, events) are stripped.
type Conn struct {
	conn    *zk.Conn // set once in Dial; read under mu by Session
	chroot  string
	changed chan struct{}

	mu      sync.Mutex
	session Session // State only; the id comes from conn
	// lastHeard is when a read last brought bytes from the server, in
	// Unix nanoseconds (the dialer's connections report every read).
	lastHeard atomic.Int64
}

var _ Client = (*Conn)(nil)

// parseZKConnect splits Kafka's zookeeper.connect into servers and chroot.
func parseZKConnect(s string) (servers []string, chroot string, err error) {
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
		if chroot == "/" {
			chroot = ""
		}
		if chroot != "" && !validPath(chroot) {
			return nil, "", fmt.Errorf("zookeeper.connect %q: invalid chroot %q", s, chroot)
		}
	}
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			servers = append(servers, h)
		}
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("zookeeper.connect %q: no servers", s)
	}
	return servers, chroot, nil
}

// Dial connects to zookeeper.connect and waits, until ctx ends, for a
// session. Kafka bounds this wait with zookeeper.connection.timeout.ms.
// A chroot is created if absent, as Kafka does.
func Dial(ctx context.Context, connect string, sessionTimeout time.Duration, log *slog.Logger, opts ...DialOption) (*Conn, error) {
	servers, chroot, err := parseZKConnect(connect)
	if err != nil {
		return nil, err
	}
	var o dialOptions
	for _, opt := range opts {
		opt(&o)
	}
	c := &Conn{changed: make(chan struct{}, 1)}
	conn, _, err := zk.Connect(servers, sessionTimeout,
		zk.WithLogger(slogPrintf{log}),
		zk.WithLogInfo(false),
		zk.WithEventCallback(c.onEvent),
		zk.WithDialer(credentialDialer(o.onSession, c.heard, handshakeTimeout(sessionTimeout))))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.conn = conn
	c.mu.Unlock()
	for {
		if c.Session().State == SessionConnected {
			break
		}
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("connecting to ZooKeeper %s: %w", connect, ctx.Err())
		case <-c.changed:
		}
	}
	if chroot != "" {
		if err := c.createChroot(chroot); err != nil {
			conn.Close()
			return nil, err
		}
		c.chroot = chroot
	}
	return c, nil
}

func (c *Conn) createChroot(chroot string) error {
	parts := strings.Split(chroot[1:], "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		if _, err := c.conn.Create(p, nil, zk.FlagPersistent, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("creating chroot %s: %w", p, mapZKErr(err))
		}
	}
	return nil
}

// onEvent runs on go-zookeeper's goroutines and must not block.
func (c *Conn) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	if c.session.State == SessionClosed {
		c.mu.Unlock()
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		// The id is read in Session: c.conn may not be set yet while
		// Dial is still inside zk.Connect.
		c.session.State = SessionConnected
	case zk.StateExpired:
		c.session.State = SessionExpired
	case zk.StateDisconnected, zk.StateConnecting, zk.StateConnected:
		// Connected (without session) is transient; the session is not
		// usable until HasSession.
		if c.session.State != SessionExpired {
			c.session.State = sessionConnecting
		}
	default:
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *Conn) Session() Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.session
	if s.State == SessionConnected && c.conn != nil {
		s.ID = c.conn.SessionID()
	}
	if ns := c.lastHeard.Load(); ns != 0 {
		s.LastHeard = time.Unix(0, ns)
	}
	return s
}

// heard records a read from the server (Session.LastHeard).
func (c *Conn) heard() { c.lastHeard.Store(time.Now().UnixNano()) }

func (c *Conn) SessionChanged() <-chan struct{} { return c.changed }

func (c *Conn) Close() {
	c.conn.Close()
	c.mu.Lock()
	c.session.State = SessionClosed
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *Conn) abs(path string) string {
	if c.chroot == "" {
		return path
	}
	if path == "/" {
		return c.chroot
	}
	return c.chroot + path
}

func (c *Conn) rel(path string) string {
	if c.chroot == "" {
		return path
	}
	p := strings.TrimPrefix(path, c.chroot)
	if p == "" {
		return "/"
	}
	return p
}

func createFlags(m CreateMode) int32 {
	switch m {
	case ModeEphemeral:
		return zk.FlagEphemeral
	case ModePersistentSequential:
		return zk.FlagSequence
	case modeEphemeralSequential:
		return zk.FlagEphemeral | zk.FlagSequence
	}
	return zk.FlagPersistent
}

func (c *Conn) Create(path string, data []byte, mode CreateMode) (string, error) {
	p, err := c.conn.Create(c.abs(path), data, createFlags(mode), zk.WorldACL(zk.PermAll))
	if err != nil {
		return "", mapZKErr(err)
	}
	return c.rel(p), nil
}

func (c *Conn) Get(path string) ([]byte, Stat, error) {
	d, s, err := c.conn.Get(c.abs(path))
	if err != nil {
		return nil, Stat{}, mapZKErr(err)
	}
	return d, statOf(s), nil
}

func (c *Conn) GetW(path string) ([]byte, Stat, <-chan Event, error) {
	d, s, ch, err := c.conn.GetW(c.abs(path))
	if err != nil {
		return nil, Stat{}, nil, mapZKErr(err)
	}
	return d, statOf(s), c.watch(ch), nil
}

func (c *Conn) Exists(path string) (bool, Stat, error) {
	ok, s, err := c.conn.Exists(c.abs(path))
	if err != nil {
		return false, Stat{}, mapZKErr(err)
	}
	if !ok {
		return false, Stat{}, nil
	}
	return true, statOf(s), nil
}

func (c *Conn) ExistsW(path string) (bool, Stat, <-chan Event, error) {
	ok, s, ch, err := c.conn.ExistsW(c.abs(path))
	if err != nil {
		return false, Stat{}, nil, mapZKErr(err)
	}
	if !ok {
		return false, Stat{}, c.watch(ch), nil
	}
	return true, statOf(s), c.watch(ch), nil
}

func (c *Conn) Set(path string, data []byte, version int32) (Stat, error) {
	s, err := c.conn.Set(c.abs(path), data, version)
	if err != nil {
		return Stat{}, mapZKErr(err)
	}
	return statOf(s), nil
}

func (c *Conn) Delete(path string, version int32) error {
	return mapZKErr(c.conn.Delete(c.abs(path), version))
}

func (c *Conn) Children(path string) ([]string, Stat, error) {
	names, s, err := c.conn.Children(c.abs(path))
	if err != nil {
		return nil, Stat{}, mapZKErr(err)
	}
	return names, statOf(s), nil
}

func (c *Conn) ChildrenW(path string) ([]string, Stat, <-chan Event, error) {
	names, s, ch, err := c.conn.ChildrenW(c.abs(path))
	if err != nil {
		return nil, Stat{}, nil, mapZKErr(err)
	}
	return names, statOf(s), c.watch(ch), nil
}

func (c *Conn) Multi(ops ...Op) ([]OpResult, error) {
	reqs := make([]any, len(ops))
	for i, op := range ops {
		switch o := op.(type) {
		case *OpCreate:
			reqs[i] = &zk.CreateRequest{Path: c.abs(o.Path), Data: o.Data, Acl: zk.WorldACL(zk.PermAll), Flags: createFlags(o.Mode)}
		case *OpSet:
			reqs[i] = &zk.SetDataRequest{Path: c.abs(o.Path), Data: o.Data, Version: o.Version}
		case *OpDelete:
			reqs[i] = &zk.DeleteRequest{Path: c.abs(o.Path), Version: o.Version}
		case *OpCheck:
			reqs[i] = &zk.CheckVersionRequest{Path: c.abs(o.Path), Version: o.Version}
		default:
			return nil, fmt.Errorf("%w: unknown op %T", errBadArguments, op)
		}
	}
	resps, err := c.conn.Multi(reqs...)
	if err == nil {
		out := make([]OpResult, len(resps))
		for i, r := range resps {
			out[i] = OpResult{Path: c.rel(r.String)}
			if r.Stat != nil {
				out[i].Stat = statOf(r.Stat)
			}
		}
		return out, nil
	}
	// The server marks the op that failed with its own error and the other
	// ops with a generic rollback code; report the first real one.
	for i, r := range resps {
		if r.Error != nil && (errors.Is(r.Error, zk.ErrNoNode) || errors.Is(r.Error, zk.ErrNodeExists) ||
			errors.Is(r.Error, zk.ErrBadVersion) || errors.Is(r.Error, zk.ErrNotEmpty) ||
			errors.Is(r.Error, zk.ErrNoChildrenForEphemerals) || errors.Is(r.Error, zk.ErrBadArguments)) {
			return nil, &MultiError{Index: i, Op: ops[i], Err: mapZKErr(r.Error)}
		}
	}
	return nil, mapZKErr(err)
}

// watch turns go-zookeeper's one-shot watch channel into ours.
func (c *Conn) watch(in <-chan zk.Event) <-chan Event {
	out := make(chan Event, 1)
	go func() {
		defer close(out)
		ev, ok := <-in
		if !ok {
			out <- Event{Type: EventNotWatching, Err: ErrConnectionClosed}
			return
		}
		e := Event{Path: c.rel(ev.Path), Err: mapZKErr(ev.Err)}
		switch ev.Type {
		case zk.EventNodeCreated:
			e.Type = EventNodeCreated
		case zk.EventNodeDeleted:
			e.Type = EventNodeDeleted
		case zk.EventNodeDataChanged:
			e.Type = EventNodeDataChanged
		case zk.EventNodeChildrenChanged:
			e.Type = EventNodeChildrenChanged
		default:
			e.Type = EventNotWatching
		}
		out <- e
	}()
	return out
}

func statOf(s *zk.Stat) Stat {
	if s == nil {
		return Stat{}
	}
	return Stat{
		Czxid:          s.Czxid,
		Mzxid:          s.Mzxid,
		Version:        s.Version,
		Cversion:       s.Cversion,
		EphemeralOwner: s.EphemeralOwner,
		NumChildren:    s.NumChildren,
	}
}

func mapZKErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return ErrNoNode
	case errors.Is(err, zk.ErrNodeExists):
		return ErrNodeExists
	case errors.Is(err, zk.ErrBadVersion):
		return ErrBadVersion
	case errors.Is(err, zk.ErrNotEmpty):
		return ErrNotEmpty
	case errors.Is(err, zk.ErrNoChildrenForEphemerals):
		return ErrNoChildrenForEphemerals
	case errors.Is(err, zk.ErrSessionExpired):
		return ErrSessionExpired
	case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrClosing), errors.Is(err, zk.ErrNoServer):
		return fmt.Errorf("%w: %v", ErrConnectionClosed, err)
	case errors.Is(err, zk.ErrBadArguments), errors.Is(err, zk.ErrInvalidPath):
		return fmt.Errorf("%w: %v", errBadArguments, err)
	}
	return err
}

// slogPrintf routes go-zookeeper's Printf logging to slog at debug level:
// it reports every reconnect attempt, which is noise at info. Why a
// connection ended ("recv loop terminated: ...", once per connection) is a
// warning: a session that expires while the broker was busy otherwise
// leaves no trace of what the client saw.
type slogPrintf struct{ log *slog.Logger }

func (l slogPrintf) Printf(format string, args ...any) {
	if l.log == nil {
		return
	}
	level := slog.LevelDebug
	if strings.Contains(format, "loop terminated") {
		level = slog.LevelWarn
	}
	// The message names the client; the logger already carries the
	// broker's component, and a second "component" key would repeat it.
	l.log.Log(context.Background(), level, "zookeeper client: "+fmt.Sprintf(format, args...))
}
