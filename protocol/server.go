package protocol

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
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
	return &Server{
		recycles:  recycles,
		cfg:       cfg,
		handler:   h,
		log:       logger,
		metrics:   m,
		ctx:       ctx,
		cancel:    cancel,
		listeners: make(map[net.Listener]struct{}),
	}
}

// Serve accepts connections on ln until ctx is done or Close is called,
// then closes ln and returns nil (ErrServerClosed if the server was already
// closed when Serve was called). Connections accepted here are closed when
// ctx is done too. listenerName labels connections (PLAINTEXT, ...).
func (s *Server) Serve(ctx context.Context, ln net.Listener, listenerName string) error {
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
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
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
		s.startConn(connCtx, nc, listenerName)
	}
}

func (s *Server) startConn(ctx context.Context, nc net.Conn, listenerName string) {
	info := &ConnInfo{
		ID:         s.nextID.Add(1),
		Listener:   listenerName,
		LocalAddr:  nc.LocalAddr(),
		RemoteAddr: nc.RemoteAddr(),
	}
	c := newConn(s, ctx, nc, info)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.serve()
	}()
}

// Close stops every listener, closes every connection and waits for all
// goroutines, including running Wait phases (which see their context
// cancelled).
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
