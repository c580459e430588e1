package controller

import (
	"context"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerChannel sends one controller request to one broker and returns its
// response. The controller never sends two requests to the same broker
// concurrently, and sends each broker's requests in order.
type BrokerChannel interface {
	Send(ctx context.Context, brokerID int32, req kmsg.Request) (kmsg.Response, error)
}

// brokerAddresses is implemented by channels that dial brokers themselves
// (kgoBrokerChannel): the controller tells them where live brokers are.
type brokerAddresses interface {
	AddBroker(brokerID int32, addr string)
	RemoveBroker(brokerID int32)
}

// selfRouting hands requests for this broker to local and the rest to
// rest, whose address book it keeps up to date.
type selfRouting struct {
	self  int32
	local func(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	rest  BrokerChannel
}

func (s selfRouting) Send(ctx context.Context, brokerID int32, req kmsg.Request) (kmsg.Response, error) {
	if brokerID == s.self {
		return s.local(ctx, req)
	}
	return s.rest.Send(ctx, brokerID, req)
}

func (s selfRouting) AddBroker(brokerID int32, addr string) {
	if a, ok := s.rest.(brokerAddresses); ok {
		a.AddBroker(brokerID, addr)
	}
}

func (s selfRouting) RemoveBroker(brokerID int32) {
	if a, ok := s.rest.(brokerAddresses); ok {
		a.RemoveBroker(brokerID)
	}
}

// channelManager is Kafka's ControllerChannelManager: one queue and one
// sender per live broker, one request in flight per broker, a failed send
// retried until the broker goes away. Responses are handed to onResponse
// from the sender's goroutine (the controller turns them into events).
//
// Locks: mu guards queues; each brokerQueue's mu guards its pending list.
// Neither is held while sending or calling onResponse.
type channelManager struct {
	ch           BrokerChannel
	onResponse   func(broker int32, req kmsg.Request, resp kmsg.Response)
	retryBackoff time.Duration
	sendTimeout  time.Duration // controller.socket.timeout.ms
	log          *slog.Logger
	// synchronous sends inline, once, on the caller's goroutine: unit
	// tests use it with a recording channel for deterministic histories.
	synchronous bool

	mu     sync.Mutex
	queues map[int32]*brokerQueue
}

type brokerQueue struct {
	mu      sync.Mutex
	pending []kmsg.Request
	wake    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

func (m *channelManager) addBroker(b liveBroker, listener string) {
	if a, ok := m.ch.(brokerAddresses); ok {
		if ep, ok := listenerEndpoint(b.Reg, listener); ok {
			a.AddBroker(b.ID, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
		}
	}
	if m.synchronous {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.queues == nil {
		m.queues = map[int32]*brokerQueue{}
	}
	if _, ok := m.queues[b.ID]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &brokerQueue{wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	m.queues[b.ID] = q
	go m.sendLoop(b.ID, q)
}

// removeBroker drops the broker's queue: requests not yet sent are lost,
// as in Kafka, because the broker will get a full state when it returns.
func (m *channelManager) removeBroker(id int32) {
	m.mu.Lock()
	q := m.queues[id]
	delete(m.queues, id)
	m.mu.Unlock()
	if q != nil {
		q.cancel()
		<-q.done
	}
	if a, ok := m.ch.(brokerAddresses); ok {
		a.RemoveBroker(id)
	}
}

func (m *channelManager) close() {
	m.mu.Lock()
	ids := make([]int32, 0, len(m.queues))
	for id := range m.queues {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		m.removeBroker(id)
	}
}

func (m *channelManager) send(broker int32, req kmsg.Request) {
	if m.synchronous {
		resp, err := m.ch.Send(context.Background(), broker, req)
		if err == nil && m.onResponse != nil {
			m.onResponse(broker, req, resp)
		}
		return
	}
	m.mu.Lock()
	q := m.queues[broker]
	m.mu.Unlock()
	if q == nil {
		return
	}
	q.mu.Lock()
	q.pending = append(q.pending, req)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (m *channelManager) sendLoop(broker int32, q *brokerQueue) {
	defer close(q.done)
	for {
		q.mu.Lock()
		var req kmsg.Request
		if len(q.pending) > 0 {
			req = q.pending[0]
		}
		q.mu.Unlock()
		if req == nil {
			select {
			case <-q.ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		resp, ok := m.sendWithRetry(broker, q.ctx, req)
		if !ok {
			return
		}
		q.mu.Lock()
		q.pending = q.pending[1:]
		q.mu.Unlock()
		if m.onResponse != nil {
			m.onResponse(broker, req, resp)
		}
	}
}

func (m *channelManager) sendWithRetry(broker int32, ctx context.Context, req kmsg.Request) (kmsg.Response, bool) {
	for {
		sctx, cancel := context.WithTimeout(ctx, m.sendTimeout)
		resp, err := m.ch.Send(sctx, broker, req)
		cancel()
		if err == nil {
			return resp, true
		}
		if ctx.Err() != nil {
			return nil, false
		}
		m.log.Warn("controller request failed, will retry", "broker", broker, "api", kmsg.NameForKey(req.Key()), "err", err)
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(m.retryBackoff):
		}
	}
}
