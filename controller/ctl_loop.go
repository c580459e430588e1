package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbroker/kbroker/internal/brokerprobe"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/metadataversion"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config is the part of the broker's configuration the
// controller's decisions read.
type Config struct {
	BrokerID            int32
	InterBrokerListener string
	// UncleanLeaderElection is the broker default of
	// unclean.leader.election.enable; /config/topics/<t> overrides it.
	UncleanLeaderElection bool
	AutoLeaderRebalance   bool
	ImbalancePerBrokerPct int
	// NewTopicID draws topic ids for topics that lack one.
	NewTopicID func() [16]byte
	// ProbeInterval is how often every registered broker's inter-broker
	// endpoint is probed (ctl_broker_probe.go); zero turns probing off.
	ProbeInterval time.Duration
	// KnownDead are broker incarnations this broker already found dead
	// (the controller it deposed, zkbroker/node_controller_probe.go): they
	// are fenced at failover instead of after a fresh round of probes.
	KnownDead []brokerprobe.Target
	// InterBrokerProtocol is inter.broker.protocol.version: it decides
	// the versions of the requests the controller sends (zero:
	// metadataversion.Latest).
	InterBrokerProtocol metadataversion.Version
}

// ctlEvent is one unit of controller work (Kafka's ControllerEvent).
type ctlEvent struct {
	name string
	run  func() error
}

type armedWatch struct {
	ch <-chan zkstore.Event
	ev ctlEvent
}

// ErrSessionLost: a watch was dropped because the ZooKeeper session ended;
// the controller stops, and the member loop elects again on the new session.
var ErrSessionLost = errors.New("zookeeper session lost")

// Controller is the active controller of one controller epoch: Kafka's
// KafkaController with its event manager. Everything runs on the goroutine
// that calls run (or runUntilIdle in tests): ZooKeeper watches, broker
// responses, admin calls and ticks become events in one queue.
//
// Locks: mu guards queue, wake and stopped only; the context, the watch
// list and every decision belong to the event goroutine.
type Controller struct {
	zk             zkstore.Client
	cfg            Config
	epoch          int32
	epochZkVersion int32
	ctx            *controllerContext
	chans          *channelManager
	log            *slog.Logger
	metrics        *Metrics

	probes      probeState
	probeQueued atomic.Bool
	fencedView  atomic.Pointer[[]int32]
	cutOff      atomic.Bool

	watches []armedWatch
	// lastConfigChange is the highest /config/changes sequence handled.
	lastConfigChange int64

	mu      sync.Mutex
	queue   []ctlEvent
	wake    chan struct{}
	stopped bool
	// done is closed by stop, so that callers waiting on an event that
	// will never run give up.
	done chan struct{}
}

// New makes the controller for the tenure st won; its first event is the
// failover. synchronous (unit tests) sends each request inline, once, on
// the event's goroutine instead of per-broker queues; m may be nil.
func New(zk zkstore.Client, cfg Config, st kafkazk.ControllerStatus, ch BrokerChannel, synchronous bool, log *slog.Logger, m *Metrics) *Controller {
	c := &Controller{
		zk:             zk,
		cfg:            cfg,
		epoch:          st.Epoch,
		epochZkVersion: st.EpochZkVersion,
		ctx:            newControllerContext(),
		probes:         newProbeState(),
		log:            log,
		metrics:        m,
		wake:           make(chan struct{}, 1),
		done:           make(chan struct{}),
	}
	c.chans = &channelManager{
		ch:           ch,
		retryBackoff: defaultRetryBackoff,
		sendTimeout:  defaultControllerSocketTimeout,
		log:          log,
		synchronous:  synchronous,
		onResponse: func(broker int32, req kmsg.Request, resp kmsg.Response) {
			c.enqueue(ctlEvent{"ControllerResponse", func() error { return c.handleResponse(broker, req, resp) }})
		},
	}
	c.enqueue(ctlEvent{"Startup", c.onControllerFailover})
	return c
}

// enqueue adds an event; it never blocks. Events for a stopped controller
// are dropped.
func (c *Controller) enqueue(ev ctlEvent) {
	c.mu.Lock()
	if !c.stopped {
		c.queue = append(c.queue, ev)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Controller) dequeue() (ctlEvent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return ctlEvent{}, false
	}
	ev := c.queue[0]
	c.queue = c.queue[1:]
	return ev, true
}

// call runs f as an event and waits for its result; it is how other
// goroutines (admin APIs) ask the controller. A controller that stops
// first answers NOT_CONTROLLER.
func (c *Controller) call(ctx context.Context, name string, f func() error) error {
	done := make(chan error, 1)
	c.enqueue(ctlEvent{name, func() error {
		err := f()
		done <- err
		// The caller gets the error; only a lost controller role is
		// fatal to the loop.
		if errors.Is(err, kafkazk.ErrControllerMoved) || errors.Is(err, ErrSessionLost) {
			return err
		}
		return nil
	}})
	select {
	case err := <-done:
		return err
	case <-c.done:
		// It may have run just before the stop.
		select {
		case err := <-done:
			return err
		default:
			return kafkazk.ErrNotController
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watch arms ev to run when ch fires.
func (c *Controller) watch(ch <-chan zkstore.Event, ev ctlEvent) {
	c.watches = append(c.watches, armedWatch{ch, ev})
}

// fired moves the watch at i to the queue, or reports the session's end.
func (c *Controller) fired(i int, zev zkstore.Event, ok bool) error {
	w := c.watches[i]
	c.watches = append(c.watches[:i], c.watches[i+1:]...)
	if !ok || zev.Type == zkstore.EventNotWatching {
		return fmt.Errorf("%w: watch for %s dropped: %v", ErrSessionLost, zev.Path, zev.Err)
	}
	c.enqueue(w.ev)
	return nil
}

// pollWatches queues the events of watches that have fired, without
// blocking.
func (c *Controller) pollWatches() error {
	for i := 0; i < len(c.watches); {
		select {
		case zev, ok := <-c.watches[i].ch:
			if err := c.fired(i, zev, ok); err != nil {
				return err
			}
		default:
			i++
		}
	}
	return nil
}

// runUntilIdle processes events until none is queued and no armed watch
// has fired. Unit tests drive the controller with it; the fake ZooKeeper
// fires watches synchronously, so histories are deterministic.
func (c *Controller) runUntilIdle() error {
	for {
		if err := c.pollWatches(); err != nil {
			return err
		}
		ev, ok := c.dequeue()
		if !ok {
			return nil
		}
		if err := c.process(ev); err != nil {
			return err
		}
	}
}

func (c *Controller) process(ev ctlEvent) error {
	err := ev.run()
	c.updateMetrics()
	if err == nil {
		return nil
	}
	if isFatalZKError(err) {
		return fmt.Errorf("%s: %w", ev.name, err)
	}
	if ev.name == "Startup" {
		// Kafka resigns when failover fails, so another broker (or
		// this one, afresh) can take over.
		return fmt.Errorf("controller failover: %w", err)
	}
	c.log.Error("controller event failed", "event", ev.name, "err", err)
	return nil
}

// Run is the event loop. It returns nil when ctx ends, otherwise the error
// that ended this controller's tenure (kafkazk.ErrControllerMoved, a lost session,
// a failed failover); the caller resigns.
func (c *Controller) Run(ctx context.Context) error {
	defer c.stop()
	if c.cfg.ProbeInterval > 0 {
		pctx, stopProbes := context.WithCancel(ctx)
		defer stopProbes()
		go c.runProbes(pctx, c.cfg.ProbeInterval)
	}
	for {
		if err := c.runUntilIdle(); err != nil {
			return err
		}
		cases := make([]reflect.SelectCase, 0, 2+len(c.watches))
		cases = append(cases,
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
			reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c.wake)})
		for _, w := range c.watches {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(w.ch)})
		}
		i, v, ok := reflect.Select(cases)
		switch i {
		case 0:
			return nil
		case 1:
		default:
			var zev zkstore.Event
			if ok {
				zev = v.Interface().(zkstore.Event)
			}
			if err := c.fired(i-2, zev, ok); err != nil {
				return err
			}
		}
	}
}

// stop ends the tenure: queued events are dropped, the request queues
// closed, the metrics zeroed.
func (c *Controller) stop() {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	c.queue = nil
	c.mu.Unlock()
	close(c.done)
	c.chans.close()
	if c.metrics != nil {
		c.metrics.resign()
	}
}

// sendBatch hands the batch's requests to the brokers' queues.
func (c *Controller) sendBatch(b *requestBatch) {
	for _, o := range b.build(controllerIdentity{ID: c.cfg.BrokerID, Epoch: c.epoch, IBP: c.cfg.InterBrokerProtocol}, c.cfg.InterBrokerListener) {
		c.chans.send(o.broker, o.req)
	}
}

func (c *Controller) updateMetrics() {
	if c.metrics != nil {
		// GlobalPartitionCount is Kafka's partitionWithLeadersCount: the
		// partitions whose state the controller holds.
		c.metrics.update(c.epoch, len(c.ctx.leadership), c.ctx.offlinePartitionCount(), len(c.ctx.assignments),
			c.ctx.preferredReplicaImbalanceCount())
	}
}
