package protocol

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("protocol: server closed")

// Server accepts Kafka client connections on any number of listeners and
// hands their decoded requests to one Handler.
type Server struct {
	cfg     ServerConfig
	handler Handler
	log     *slog.Logger
	metrics *metrics
	// recycles is the handler's FrameRecycler, or nil.
	recycles func(key int16) bool
	frames   framePool
	// pool is queued.max.request.bytes, requestSlots queued.max.requests.
	pool         *memoryPool
	requestSlots chan struct{}
	quotas       *connQuotas
	// muted counts connections not read because the pool or the request
	// slots are exhausted.
	muted atomic.Int64
	// garbage counts bytes of frames dropped to the garbage collector
	// since the last collection the pool asked for (gcRunning).
	garbage   atomic.Int64
	gcRunning atomic.Bool

	lastRejectLog   atomic.Int64
	rejectsUnlogged atomic.Int64

	connMu     sync.Mutex // guards conns and lastRelief
	conns      map[*conn]struct{}
	lastRelief time.Time

	// ctx is cancelled by Close; every connection's context derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	nextID atomic.Uint64
	wg     sync.WaitGroup // Serve calls and connections

	mu        sync.Mutex // guards listeners and closed
	listeners map[net.Listener]struct{}
	closed    bool
}

// NewServer returns a Server; it serves nothing until Serve is called. A
// metrics registration failure (a foreign collector under our names) is
// logged and metrics are dropped rather than failing start-up.
func NewServer(cfg ServerConfig, h Handler, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		logger.Error("protocol metrics not registered", "err", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var recycles func(int16) bool
	if r, ok := h.(FrameRecycler); ok {
		recycles = r.RecyclesFrame
	}
	s := &Server{
		pool:         newMemoryPool(cfg.QueuedMaxRequestBytes),
		requestSlots: make(chan struct{}, cfg.QueuedMaxRequests),
		quotas:       newConnQuotas(cfg),
		conns:        map[*conn]struct{}{},
		recycles:     recycles,
		cfg:          cfg,
		handler:      h,
		log:          logger,
		metrics:      m,
		ctx:          ctx,
		cancel:       cancel,
		listeners:    make(map[net.Listener]struct{}),
	}
	s.metrics.observeServer(s)
	s.wg.Add(1)
	go s.returnMemory()
	return s
}

// Serve accepts connections on ln until ctx is done or Close is called,
// then closes ln and returns nil (ErrServerClosed if the server was already
// closed when Serve was called). Connections accepted here are closed when
// ctx is done too. listenerName labels connections (PLAINTEXT, ...).
func (s *Server) Serve(ctx context.Context, ln net.Listener, listenerName string) error {
	return s.ServeListener(ctx, ln, ListenerConfig{Name: listenerName})
}

// ServeListener is Serve for a listener secured as lc says.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, lc ListenerConfig) error {
	listenerName := lc.Name
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	connCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopServer := context.AfterFunc(s.ctx, cancel)
	defer stopServer()
	// Accept does not take a context: closing the listener is how it is
	// interrupted.
	stopAccept := context.AfterFunc(connCtx, func() { ln.Close() })
	defer stopAccept()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if connCtx.Err() != nil || s.isClosed() {
				return nil
			}
			if transientAcceptError(err) {
				// Kafka's acceptor also keeps going after transient
				// failures such as running out of file descriptors.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed", "listener", listenerName, "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
				case <-connCtx.Done():
					return nil
				}
				continue
			}
			return err
		}
		backoff = 0
		if !s.waitCreationRate(connCtx, listenerName) {
			nc.Close()
			return nil
		}
		s.startConn(connCtx, nc, &lc)
	}
}

// transientAcceptError is an accept failure that passes: a timeout, a
// connection reset before it was accepted, or running out of descriptors
// or kernel memory, which closing connections relieves.
func transientAcceptError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// waitCreationRate delays the acceptor while max.connection.creation.rate
// is exceeded, as Kafka's acceptor throttles; false when ctx ended.
func (s *Server) waitCreationRate(ctx context.Context, listener string) bool {
	for i := 0; i < 1000; i++ {
		d := s.quotas.throttle(listener, time.Now())
		if d <= 0 {
			return true
		}
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func (s *Server) startConn(ctx context.Context, nc net.Conn, lc *ListenerConfig) {
	listenerName := lc.Name
	counters := s.metrics.forListener(listenerName)
	ip := ipOf(nc.RemoteAddr())
	if reason, ok := s.quotas.admit(listenerName, ip, time.Now()); !ok {
		counters.rejected(string(reason))
		s.logReject(listenerName, ip, reason)
		// Kafka closes a connection over the per-ip limit at once; one
		// over max.connections waits in the accept queue there, which
		// leaves its client hanging, so it is closed here too.
		nc.Close()
		return
	}
	counters.opened()
	info := &ConnInfo{
		ID:         s.nextID.Add(1),
		Listener:   listenerName,
		LocalAddr:  nc.LocalAddr(),
		RemoteAddr: nc.RemoteAddr(),
	}
	c := newConn(s, ctx, nc, info, lc)
	c.counters = counters
	s.connMu.Lock()
	s.conns[c] = struct{}{}
	s.connMu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.serve()
		s.connMu.Lock()
		delete(s.conns, c)
		s.connMu.Unlock()
		s.quotas.release(ip)
		counters.closed()
	}()
}

// logReject logs refused connections, at most once a second with the
// number left unlogged: a burst of thousands must not flood the log.
func (s *Server) logReject(listener, ip string, reason rejectReason) {
	now := time.Now().UnixNano()
	last := s.lastRejectLog.Load()
	if now-last < int64(time.Second) || !s.lastRejectLog.CompareAndSwap(last, now) {
		s.rejectsUnlogged.Add(1)
		return
	}
	s.log.Info("closing new connection: limit reached", "listener", listener, "remote_ip", ip,
		"limit", string(reason), "also_closed_since_last_log", s.rejectsUnlogged.Swap(0))
}

// Close stops every listener, closes every connection and waits for all
// goroutines, including running Wait phases (which see their context
// cancelled).
// SetConnectionLimits applies changed max.connections,
// max.connections.per.ip (and overrides) and max.connection.creation.rate
// from cfg; its other fields are ignored.
func (s *Server) SetConnectionLimits(cfg ServerConfig) { s.quotas.reconfigure(cfg) }

func (s *Server) Close() {
	s.cancel()
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
