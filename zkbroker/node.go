package zkbroker

import (
	"context"
	"errors"
	"fmt"
	"github.com/twmb/franz-go/pkg/kgo"
	"log/slog"
	"sync"
	"time"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/internal/brokerprobe"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/metadataversion"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Endpoint is one advertised listener, as written to /brokers/ids/<id>.
type Endpoint struct {
	Listener         string // listener name, e.g. PLAINTEXT
	Host             string
	Port             int32
	SecurityProtocol string // PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
}

// TopicPartition names one partition.
type TopicPartition = kafkazk.TopicPartition

// Config is the broker configuration the ZooKeeper mode needs, with
// server.properties names in the comments.
type Config struct {
	BrokerID         int32  // broker.id
	ZooKeeperConnect string // zookeeper.connect, with optional chroot
	// Store, when set, replaces ZooKeeper: the broker is a cluster of one
	// whose metadata lives in the log dir (no zookeeper.connect).
	Store          *zkstore.LocalStore
	SessionTimeout time.Duration // zookeeper.session.timeout.ms (18 s)
	// ConnectionTimeout bounds the first connection
	// (zookeeper.connection.timeout.ms); zero means SessionTimeout.
	ConnectionTimeout time.Duration
	// BrokerProbeInterval is how often the controller probes every broker,
	// and every other broker the controller, for a process that is gone
	// (internal/brokerprobe); zero means brokerprobe.DefaultInterval,
	// negative turns probing off.
	BrokerProbeInterval time.Duration
	// InterBrokerProtocol is inter.broker.protocol.version (zero:
	// metadataversion.Latest).
	InterBrokerProtocol metadataversion.Version
	// SessionDir is a log dir where the ZooKeeper session's credentials
	// are kept (session_file.go), so that the next run can close a
	// session this one could not; empty: not kept.
	SessionDir string
	// InterBrokerListener names the endpoint controller requests go to
	// (inter.broker.listener.name; PLAINTEXT by default).
	InterBrokerListener string
	Endpoints           []Endpoint // advertised.listeners
	Rack                string     // broker.rack

	UncleanLeaderElectionEnable        bool          // unclean.leader.election.enable (false)
	AutoLeaderRebalanceEnable          bool          // auto.leader.rebalance.enable (true in Kafka)
	LeaderImbalanceCheckInterval       time.Duration // leader.imbalance.check.interval.seconds (300 s)
	LeaderImbalancePerBrokerPercentage int           // leader.imbalance.per.broker.percentage (10)

	// Registerer receives the controller gauges; nil: none.
	Registerer prometheus.Registerer
	// BrokerChannel carries controller requests; nil: a franz-go client
	// per broker on the inter-broker listener.
	BrokerChannel controller.BrokerChannel
	// Self, when set, carries the controller's requests to this broker
	// in-process: the controller reaches its own broker whatever the
	// network makes of its advertised address.
	Self func(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	// ClientOpts secure the franz-go clients to other brokers as the
	// inter-broker listener requires (TLS, SASL).
	ClientOpts []kgo.Opt
	// Now and the tick channels are for tests; nil means wall clock,
	// a 2.5 s ticker for ISR change propagation and, for the leader
	// imbalance check, a first tick 5 s after start then one every
	// LeaderImbalanceCheckInterval.
	Now                       func() time.Time
	IsrChangePropagationTicks <-chan time.Time
	LeaderImbalanceTicks      <-chan time.Time
}

// ErrNotConnected: the Node is not running (Run not called or returned).
var ErrNotConnected = errors.New("controller: not connected to ZooKeeper")

// Node is one broker's part in the ZooKeeper cluster: its registration,
// the controller election, and — while it is the controller — the
// controller itself. Its methods are safe for concurrent use.
//
// Locks: mu guards the fields below it. It is never held across a
// ZooKeeper call or while waiting for the controller's event loop.
type Node struct {
	cfg     Config
	log     *slog.Logger
	metrics *controller.Metrics
	isr     *isrChangePropagator

	mu          sync.Mutex
	zk          zkstore.Client
	status      kafkazk.ControllerStatus
	clusterID   string
	brokerEpoch int64
	active      *controller.Controller
	stopActive  context.CancelFunc
	activeDone  chan struct{}
	// deadController: see node_controller_probe.go.
	deadController deadController
	// holdCandidacyUntil: see candidacyHold.
	holdCandidacyUntil time.Time
}

// New checks the configuration; Run connects.
func New(cfg Config, logger *slog.Logger) (*Node, error) {
	if cfg.ZooKeeperConnect == "" && cfg.Store == nil {
		return nil, errors.New("zookeeper.connect is empty")
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 18 * time.Second
	}
	if cfg.InterBrokerListener == "" {
		cfg.InterBrokerListener = "PLAINTEXT"
	}
	if cfg.LeaderImbalanceCheckInterval <= 0 {
		cfg.LeaderImbalanceCheckInterval = 300 * time.Second
	}
	if cfg.LeaderImbalancePerBrokerPercentage == 0 {
		cfg.LeaderImbalancePerBrokerPercentage = 10
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	found := false
	for _, e := range cfg.Endpoints {
		found = found || e.Listener == cfg.InterBrokerListener
	}
	if !found {
		return nil, fmt.Errorf("inter-broker listener %s is not among the advertised endpoints", cfg.InterBrokerListener)
	}
	if logger == nil {
		logger = slog.Default()
	}
	m, err := controller.NewMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Node{
		cfg:         cfg,
		log:         logger,
		metrics:     m,
		isr:         newIsrChangePropagator(cfg.Now()),
		status:      kafkazk.NoController,
		brokerEpoch: -1,
	}, nil
}

// Run connects to ZooKeeper, registers the broker and takes part in the
// controller election until ctx ends. It returns an error if the broker id
// is registered by another live broker or ZooKeeper cannot be reached.
func (n *Node) Run(ctx context.Context) error {
	if n.cfg.Store != nil {
		zk := n.cfg.Store.Connect()
		defer zk.Close()
		return n.run(ctx, zk)
	}
	timeout := n.cfg.ConnectionTimeout
	if timeout <= 0 {
		timeout = n.cfg.SessionTimeout
	}
	var opts []zkstore.DialOption
	if n.cfg.SessionDir != "" {
		f := sessionFileIn(n.cfg.SessionDir)
		closePreviousSession(ctx, f, n.cfg.ZooKeeperConnect, n.cfg.SessionTimeout, n.log)
		opts = append(opts, zkstore.OnSession(func(c zkstore.SessionCredentials) {
			if err := f.save(c); err != nil {
				n.log.Warn("cannot keep the ZooKeeper session's credentials; after a crash the next start waits for the session to expire",
					"file", f.path, "err", err)
			}
		}))
		// After zk.Close (deferred below, so run first): the session
		// is closed and there is nothing left to reclaim.
		defer func() {
			if err := f.remove(); err != nil {
				n.log.Warn("cannot remove the ZooKeeper session file", "file", f.path, "err", err)
			}
		}()
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	zk, err := zkstore.Dial(dctx, n.cfg.ZooKeeperConnect, n.cfg.SessionTimeout, n.log, opts...)
	cancel()
	if err != nil {
		return err
	}
	defer zk.Close()
	return n.run(ctx, zk)
}

func (n *Node) run(ctx context.Context, zk zkstore.Client) error {
	n.mu.Lock()
	n.zk = zk
	n.mu.Unlock()
	defer func() {
		n.stopController()
		n.mu.Lock()
		n.zk = nil
		n.status = kafkazk.NoController
		n.mu.Unlock()
	}()
	reg := n.registration()
	for _, e := range n.cfg.Endpoints {
		reg.Endpoints = append(reg.Endpoints, kafkazk.Endpoint(e))
	}
	member := &zkMember{
		zk:           zk,
		brokerID:     n.cfg.BrokerID,
		registration: reg,
		nowMs:        func() int64 { return n.cfg.Now().UnixMilli() },
		newClusterID: kafkazk.NewClusterID,
		retryBackoff: time.Second,
		// Twice the session timeout, in seconds of backoff: the server may
		// have granted the old session more than was asked for, and
		// expiry runs on its tick.
		takenRetries: int(2*n.cfg.SessionTimeout/time.Second) + 1,
		log:          n.log,
		onRegistered: func(clusterID string, epoch int64) {
			n.mu.Lock()
			n.clusterID, n.brokerEpoch = clusterID, epoch
			n.mu.Unlock()
		},
		onController: func(s kafkazk.ControllerStatus) { n.onController(zk, s) },
		holdCandidacy: func() time.Duration {
			n.mu.Lock()
			defer n.mu.Unlock()
			return n.holdCandidacyUntil.Sub(n.cfg.Now())
		},
	}
	tickCtx, stopTicks := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); n.propagateIsrChanges(tickCtx) }()
	go func() { defer wg.Done(); n.checkLeaderImbalance(tickCtx) }()
	if iv := n.probeInterval(); iv > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); n.probeController(tickCtx, zk, iv) }()
	}
	err := member.run(ctx)
	stopTicks()
	wg.Wait()
	return err
}

// onController starts or stops the controller as the election says. It is
// called on the member loop's goroutine.
func (n *Node) onController(zk zkstore.Client, s kafkazk.ControllerStatus) {
	n.mu.Lock()
	n.status = s
	same := n.active != nil && n.active.Epoch() == s.Epoch
	n.mu.Unlock()
	if s.IsController && same {
		return
	}
	n.stopController()
	if !s.IsController {
		return
	}
	ch, closeChannel := controller.OpenBrokerChannel(n.cfg.BrokerID, n.cfg.BrokerChannel, n.cfg.Self, n.cfg.ClientOpts...)
	c := controller.New(zk, controller.Config{
		BrokerID:              n.cfg.BrokerID,
		InterBrokerListener:   n.cfg.InterBrokerListener,
		UncleanLeaderElection: n.cfg.UncleanLeaderElectionEnable,
		AutoLeaderRebalance:   n.cfg.AutoLeaderRebalanceEnable,
		ImbalancePerBrokerPct: n.cfg.LeaderImbalancePerBrokerPercentage,
		NewTopicID:            n.newTopicID,
		ProbeInterval:         n.probeInterval(),
		KnownDead:             n.knownDead(zk, time.Now()),
		InterBrokerProtocol:   n.cfg.InterBrokerProtocol,
	}, s, ch, false, n.log, n.metrics)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	n.mu.Lock()
	n.active, n.stopActive, n.activeDone = c, cancel, done
	n.mu.Unlock()
	go func() {
		defer close(done)
		err := c.Run(ctx)
		closeChannel()
		n.mu.Lock()
		if n.active == c {
			n.active = nil
		}
		n.mu.Unlock()
		if err == nil || ctx.Err() != nil {
			return
		}
		n.log.Warn("controller resigning", "broker", n.cfg.BrokerID, "epoch", c.Epoch(), "err", err)
		if errors.Is(err, kafkazk.ErrControllerMoved) || errors.Is(err, controller.ErrSessionLost) {
			// Another controller exists, or the session is gone: the
			// member loop sees it through its /controller watch.
			return
		}
		// Delete /controller so that the election runs again.
		if rerr := kafkazk.ResignController(zk, c.EpochZkVersion()); rerr != nil {
			n.log.Warn("resigning controller", "err", rerr)
		}
	}()
}

// ibp is the broker's inter.broker.protocol.version.
func (n *Node) ibp() metadataversion.Version { return n.cfg.InterBrokerProtocol.OrLatest() }

// registration is this broker's /brokers/ids record without endpoints, as
// a Kafka 3.9 broker at the same inter.broker.protocol.version writes it.
// From 2.7-IV0 a broker registers the feature range it supports, and a
// Kafka controller with finalized features ignores a registration that
// does not cover them (KafkaController.processBrokerChange);
// metadata.version 1..21 is 3.9's range (21 = 3.9-IV0). Below, the record
// is version 4, without features.
func (n *Node) registration() kafkazk.BrokerZNode {
	ibp := n.ibp()
	reg := kafkazk.BrokerZNode{Version: ibp.BrokerRegistrationVersion(), JmxPort: -1, Rack: n.cfg.Rack}
	if ibp.FeatureVersioning() {
		reg.Features = map[string]kafkazk.FeatureRange{"metadata.version": {Min: 1, Max: 21}}
	}
	return reg
}

// probeInterval is BrokerProbeInterval with its default; zero: off.
func (n *Node) probeInterval() time.Duration {
	switch iv := n.cfg.BrokerProbeInterval; {
	case iv < 0:
		return 0
	case iv == 0:
		return brokerprobe.DefaultInterval
	default:
		return iv
	}
}

// candidacyHold is how long a controller that lost its tenure while cut off
// from most brokers stays out of the next election, so that a broker the
// others can reach wins it.
const candidacyHold = 3 * time.Second

func (n *Node) stopController() {
	n.mu.Lock()
	cancel, done := n.stopActive, n.activeDone
	if n.active != nil && n.active.CutOff() {
		n.holdCandidacyUntil = n.cfg.Now().Add(candidacyHold)
		n.log.Warn("this controller reached fewer brokers than failed it; staying out of the next election for a while",
			"broker", n.cfg.BrokerID, "hold", candidacyHold)
	}
	n.active, n.stopActive, n.activeDone = nil, nil, nil
	n.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (n *Node) controller() (*controller.Controller, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.active == nil {
		return nil, kafkazk.ErrNotController
	}
	return n.active, nil
}

func (n *Node) client() (zkstore.Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.zk == nil {
		return nil, ErrNotConnected
	}
	return n.zk, nil
}

// ControllerID is the active controller's broker id, -1 if unknown.
func (n *Node) ControllerID() int32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status.ControllerID
}

// IsController reports whether this broker is the active controller.
func (n *Node) IsController() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status.IsController && n.active != nil
}

// ControllerEpoch is this broker's controller epoch while it is the
// controller, else 0.
func (n *Node) ControllerEpoch() int32 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.status.IsController {
		return 0
	}
	return n.status.Epoch
}

// ClusterID is /cluster/id, "" before registration.
func (n *Node) ClusterID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.clusterID
}

// BrokerEpoch is the czxid of this broker's current registration (KIP-380),
// -1 before registration. It goes into ControlledShutdown requests.
func (n *Node) BrokerEpoch() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.brokerEpoch
}

// checkLeaderImbalance turns leader-imbalance ticks into controller events.
func (n *Node) checkLeaderImbalance(ctx context.Context) {
	if !n.cfg.AutoLeaderRebalanceEnable {
		return
	}
	ticks := n.cfg.LeaderImbalanceTicks
	var next *time.Timer
	if ticks == nil {
		// Kafka checks first 5 s after failover, then every interval.
		next = time.NewTimer(5 * time.Second)
		defer next.Stop()
		ticks = next.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			if next != nil {
				next.Reset(n.cfg.LeaderImbalanceCheckInterval)
			}
			if c, err := n.controller(); err == nil {
				c.CheckLeaderImbalance()
			}
		}
	}
}

// ControlledShutdown is the controller's side of ControlledShutdown: it
// returns the partitions the broker still leads; the broker retries until
// none is left.
func (n *Node) ControlledShutdown(ctx context.Context, brokerID int32, brokerEpoch int64) ([]TopicPartition, error) {
	c, err := n.controller()
	if err != nil {
		return nil, err
	}
	return c.ControlledShutdown(ctx, brokerID, brokerEpoch)
}

// AlterPartition is the controller's side of AlterPartition (KIP-497);
// the error is the request's.
func (n *Node) AlterPartition(ctx context.Context, brokerID int32, brokerEpoch int64, version int16, items []controller.AlterPartitionItem) ([]controller.AlterPartitionResult, error) {
	c, err := n.controller()
	if err != nil {
		return nil, err
	}
	return c.AlterPartition(ctx, brokerID, brokerEpoch, version, items)
}

// ElectLeaders runs preferred or unclean elections (KIP-460); partitions
// nil means all. Each partition maps to nil or its error (kerr or
// *KafkaError).
func (n *Node) ElectLeaders(ctx context.Context, typ controller.ElectionType, partitions []TopicPartition) (map[TopicPartition]error, error) {
	c, err := n.controller()
	if err != nil {
		return nil, err
	}
	return c.ElectLeaders(ctx, typ, partitions)
}

// AlterPartitionReassignments starts (target replicas) or cancels (nil)
// reassignments (KIP-455). Each partition maps to nil or its error.
func (n *Node) AlterPartitionReassignments(ctx context.Context, reassignments map[TopicPartition][]int32) (map[TopicPartition]error, error) {
	c, err := n.controller()
	if err != nil {
		return nil, err
	}
	return c.AlterPartitionReassignments(ctx, reassignments)
}

// ListPartitionReassignments lists ongoing reassignments; partitions nil
// means all.
func (n *Node) ListPartitionReassignments(ctx context.Context, partitions []TopicPartition) (map[TopicPartition]controller.OngoingReassignment, error) {
	c, err := n.controller()
	if err != nil {
		return nil, err
	}
	return c.ListPartitionReassignments(ctx, partitions)
}
