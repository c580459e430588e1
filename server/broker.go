package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/twmb/franz-go/pkg/kgo"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/internal/clock"
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/quota"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/replica/fetcher"
	"github.com/kbroker/kbroker/replica/throttle"
	"github.com/kbroker/kbroker/security/acl"
	"github.com/kbroker/kbroker/server/group"
	"github.com/kbroker/kbroker/server/txn"
	"github.com/kbroker/kbroker/zkstore"
)

// Broker is one kbroker process: its topic table, logs and API handlers.
type Broker struct {
	// cfg is the static configuration (server.properties and overrides).
	// Keys that may change at runtime are read from current(), which
	// adds the dynamic broker configs (dynamic_broker_configs.go).
	cfg *config.Config
	// dynamic is the configuration in force once the dynamic layers were
	// read; dynamicMu orders its replacements.
	dynamic   atomic.Pointer[config.Config]
	dynamicMu sync.Mutex
	// brokerConfigs is where dynamic broker configs are stored, set in Run.
	brokerConfigs brokerConfigStore
	// listenerTLS holds each TLS listener's configuration in force, by
	// listener name (listener_tls_reload.go).
	listenerTLS map[string]*reloadableTLS
	// leaderQuota and followerQuota are the replication quotas (KIP-73,
	// fetch_throttle.go).
	leaderQuota, followerQuota *throttle.Quota
	logger                     *slog.Logger
	reg                        *prometheus.Registry

	logs *logstore.Manager
	// store is the metadata store of a broker without ZooKeeper; nil
	// when zookeeper.connect names the cluster's.
	store *zkstore.LocalStore
	srv   *protocol.Server
	// toController carries ISR changes and producer id requests to the
	// controller at the inter.broker.protocol.versions that send them
	// there.
	toController *controllerClient

	// mu serialises changes to the topic table; readers load topicsSnap,
	// which writers replace whole (copy on write, putTopicLocked).
	mu         sync.Mutex
	topicsSnap atomic.Pointer[topicSnapshot]

	// cluster is the broker's side of the cluster: a standalone broker is
	// a cluster of one.
	cluster *clusterState
	// replicas are the partitions this broker hosts.
	replicas *replica.Manager
	// fetchers is the replicas' fetcher manager, which the replica audit
	// asks what is followed (replica_audit.go) and num.replica.fetchers
	// changes resize.
	fetchers *fetcher.Manager

	// quotas are the client quotas in force and what clients used.
	quotas *quota.Set

	groups *group.Coordinator
	txns   *txn.Coordinator
	// txnPeers carries transaction markers and verifications to other
	// brokers.
	txnPeers *txnPeers
	metrics  *brokerMetrics
	// topicStats are BrokerTopicMetrics for all topics; each topic's hang
	// on its topic-table entry (Topic.stats).
	topicStats brokerTopicStats
	// now is the broker's clock; tests replace it.
	now func() time.Time
	// halt ends the process at once when every log dir has failed
	// (os.Exit; tests replace it).
	halt func(code int)

	// data is the produce/fetch path's state: producer ids, fetch sessions.
	data *dataPath
	// delayed is the purgatory where acks=-1 produces, offset commits and
	// long-polling fetches wait on partitions.
	delayed *delayedOps

	// bound holds each listener's actual address once Run listens, so a
	// configured port 0 (tests) is advertised as the port really bound.
	boundMu sync.RWMutex
	bound   map[string]*net.TCPAddr
	// serving is set once Run accepts connections.
	serving atomic.Bool

	// interBrokerOpts secure every client this broker opens to another
	// (replica fetchers, the controller's channel, transaction markers,
	// controlled shutdown) as the inter-broker listener requires.
	interBrokerOpts []kgo.Opt
	// listenerConfigs secure each of cfg.Listeners, in the same order.
	listenerConfigs []protocol.ListenerConfig
	// authorizer is nil unless authorizer.class.name turns ACLs on; it
	// caches every ACL of the metadata store.
	authorizer *acl.Authorizer
	// aclMu makes each read (and write) of the stored ACLs and the cache
	// update from it one step, as AclAuthorizer's lock does: a change
	// notification's reload racing a CreateAcls could otherwise put the
	// older read into the cache last.
	aclMu sync.Mutex
	// security is where credentials and ACLs are stored, set in Run.
	security securityStore
	// replicaSelector is replica.selector.class (fetch_follower.go).
	replicaSelector replica.ReplicaSelector
}

// topicPartitionExists is what the coordinators know of the metadata: a
// partition of a topic in the topic table.
func (b *Broker) topicPartitionExists(topic string, partition int32) bool {
	t := b.topic(topic)
	return t != nil && partition >= 0 && int(partition) < len(t.States)
}

// New opens the log dirs (recovering them after a crash) and the metadata
// store of a broker without ZooKeeper. It does not listen yet; Run does,
// and learns the topics from the controller.
func New(cfg *config.Config, reg *prometheus.Registry, logger *slog.Logger) (*Broker, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	b := &Broker{
		cfg:    cfg,
		logger: logger,
		reg:    reg,
		bound:  map[string]*net.TCPAddr{},
		now:    time.Now,
		halt:   os.Exit,

		listenerTLS:     map[string]*reloadableTLS{},
		leaderQuota:     throttle.New(),
		followerQuota:   throttle.New(),
		replicaSelector: replicaSelectorOf(cfg.ReplicaSelectorClass),
	}
	b.toController = &controllerClient{b: b}
	for _, l := range cfg.Listeners {
		lc, err := b.listenerConfig(cfg.ListenerSecurity(l.Name))
		if err != nil {
			return nil, err
		}
		b.listenerConfigs = append(b.listenerConfigs, lc)
	}
	opts, err := interBrokerClientOpts(cfg)
	if err != nil {
		return nil, err
	}
	b.interBrokerOpts = opts
	if cfg.AuthorizerEnabled() {
		b.authorizer = acl.New(acl.Config{SuperUsers: cfg.SuperUsers(), AllowEveryoneIfNoACLFound: cfg.AllowEveryoneIfNoACLFound})
	}
	b.delayed = newDelayedOps(nil)
	b.setTopicsLocked(map[string]*Topic{}, map[[16]byte]*Topic{})
	// The metrics read the replica manager: they are registered once it
	// exists, so that a scrape during start-up finds it.
	b.metrics = newBrokerMetrics(b)
	logs, err := logstore.OpenManagerWithOptions(logstore.ManagerOptions{
		Dirs:     cfg.LogDirs,
		Defaults: cfg.LogDefaults(),
		Logger:   logger,
		BrokerID: cfg.BrokerID,

		RetentionCheckInterval: cfg.LogRetentionCheckInterval,
		ProducerIDExpiration:   cfg.ProducerIDExpiration,
		RecoveryThreads:        int(cfg.NumRecoveryThreadsPerDataDir),
		OnDirFailure:           b.onLogDirFailure,
	})
	if err != nil {
		return nil, err
	}
	b.logs = logs
	// Both modes run the cluster path: the topic table comes from the
	// controller's UpdateMetadata; ZooKeeper or the local store is
	// connected in Run, once the listeners are bound and can be
	// registered.
	b.cluster = newClusterState(nil)
	b.fetchers = b.newFetchers()
	b.replicas = replica.NewManager(replica.ManagerConfig{
		BrokerID:         cfg.BrokerID,
		Logs:             logs,
		Fetchers:         b.fetchers,
		Logger:           logger,
		TopicConfigs:     b.clusterTopicConfigs,
		LogConfig:        func(o map[string]string) logstore.Config { return b.current().TopicLogConfig(o) },
		PartitionOptions: b.partitionOptions,
	})
	if cfg.Standalone() {
		store, err := b.openLocalStore()
		if err != nil {
			logs.Close()
			return nil, err
		}
		b.store = store
	}
	if err := reg.Register(b.metrics); err != nil {
		b.closeStores()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := reg.Register(newTopicStatsCollector(b)); err != nil {
		b.closeStores()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	b.quotas = newQuotas(cfg)
	if err := reg.Register(newQuotaMetrics(b)); err != nil {
		b.closeStores()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	b.data = newDataPath(b)
	b.groups = group.New(group.Config{
		OffsetsTopicNumPartitions:  cfg.OffsetsTopicNumPartitions,
		GroupInitialRebalanceDelay: cfg.GroupInitialRebalanceDelay,
		GroupMinSessionTimeout:     cfg.GroupMinSessionTimeout,
		GroupMaxSessionTimeout:     cfg.GroupMaxSessionTimeout,
		GroupMaxSize:               int(cfg.GroupMaxSize),
		OffsetsRetention:           cfg.OffsetsRetention,
		TopicPartitionExists:       b.topicPartitionExists,
		VerifyTransaction:          b.verifyTxnOffsetCommit,
	}, offsetsLog{b}, group.RealClock{}, logger)
	b.txnPeers = &txnPeers{b: b}
	b.txns = txn.New(txn.Config{
		NumPartitions:             cfg.TransactionStateLogNumPartitions,
		MaxTransactionTimeout:     cfg.TransactionMaxTimeout,
		TransactionalIDExpiration: cfg.TransactionalIDExpiration,
		AbortTimedOutInterval:     cfg.TransactionAbortTimedOutCleanupInterval,
		RemoveExpiredInterval:     cfg.TransactionRemoveExpiredCleanupInterval,
		RequestTimeout:            defaultRequestTimeout,
		TopicPartitionExists:      b.topicPartitionExists,
	}, txnLog{b}, txnMarkerWriter{b}, txnProducerIDs{b}, txn.RealClock{}, logger)
	if _, err := b.txns.RegisterMetrics(reg); err != nil {
		b.closeStores()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	b.srv = protocol.NewServer(serverConfig(cfg, reg), b, logger)
	boundHeap(cfg, logger)
	return b, nil
}

// Run listens on every configured listener and serves until ctx ends, then
// shuts down: stops accepting, closes connections, flushes and checkpoints
// the logs and marks the clean shutdown.
func (b *Broker) Run(stop context.Context) error {
	// Everything runs on ctx, which outlives stop: a stopping broker keeps
	// serving (and its ZooKeeper session) through the controlled shutdown.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer b.toController.reset()
	var lns []net.Listener
	for _, l := range b.cfg.Listeners {
		ln, err := net.Listen("tcp", net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
		if err != nil {
			for _, o := range lns {
				o.Close()
			}
			b.logs.Close()
			return fmt.Errorf("listeners: %w", err)
		}
		lns = append(lns, ln)
		b.boundMu.Lock()
		b.bound[l.Name] = ln.Addr().(*net.TCPAddr)
		b.boundMu.Unlock()
	}
	node, err := b.newNode()
	if err != nil {
		for _, o := range lns {
			o.Close()
		}
		b.closeStores()
		return err
	}
	b.cluster.control = nodeControl{node}
	b.security = node
	b.brokerConfigs = node
	var wg sync.WaitGroup
	errs := make(chan error, len(lns)+2)
	if b.authorizer != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node.WatchACLChanges(ctx, b.reloadACLs)
		}()
	}
	wg.Add(5)
	go func() {
		defer wg.Done()
		b.runTopicConfigChanges(ctx, node)
	}()
	go func() {
		defer wg.Done()
		b.runBrokerConfigChanges(ctx, node)
	}()
	nodeFailed := make(chan struct{})
	go func() {
		defer wg.Done()
		if err := node.Run(ctx); err != nil && ctx.Err() == nil {
			errs <- fmt.Errorf("zookeeper: %w", err)
			close(nodeFailed)
		}
	}()
	go func() {
		defer wg.Done()
		b.replicas.RunIsrExpiration(ctx, b.isrCheckInterval())
	}()
	go func() {
		defer wg.Done()
		clock.Every(ctx, b.isrCheckInterval(), func() { b.checkDeposedLeaders(node) })
	}()
	if b.store != nil {
		// The controller is this broker: clients are served once it has
		// told the broker about itself and its partitions, so that the
		// first Metadata already lists them, as a standalone broker always
		// did.
		b.awaitOwnMetadata(stop, nodeFailed)
	}
	b.loadDynamicConfigs(stop, node, nodeFailed)
	if b.authorizer != nil {
		// Kafka's authorizer loads every ACL before the broker serves:
		// a request must never be judged against a partial set.
		b.loadACLs(stop, node, nodeFailed)
	}
	b.loadQuotas(stop, node, nodeFailed)
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.runQuotaConfigChanges(ctx, node)
	}()
	b.serving.Store(true)
	for i, ln := range lns {
		name := b.cfg.Listeners[i].Name
		lc := b.listenerConfigs[i]
		b.logger.Info("listening", "listener", name, "addr", ln.Addr().String(), "security_protocol", b.cfg.SecurityProtocol(name))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.srv.ServeListener(ctx, ln, lc); err != nil && ctx.Err() == nil {
				errs <- fmt.Errorf("listener %s: %w", name, err)
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		b.logs.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		b.replicas.RunHighWatermarkCheckpoints(ctx, b.cfg.ReplicaHighWatermarkCheckpointInterval)
	}()
	if b.cfg.ReplicaAuditInterval > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.newReplicaAudit().Run(ctx)
		}()
	}
	if err := b.adoptClusterID(stop, node, nodeFailed); err != nil {
		errs <- err
	}
	b.logger.Info("kbroker started", "broker.id", b.cfg.BrokerID, "cluster.id", b.logs.ClusterID())

	var runErr error
	select {
	case <-stop.Done():
	case runErr = <-errs:
	}
	b.logger.Info("shutting down")
	if runErr == nil {
		// Leadership moves off this broker while it still serves.
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Minute)
		moved := b.controlledShutdown(sctx)
		scancel()
		b.drainAfterShutdown(moved)
	}
	cancel()
	b.replicas.Close()
	b.srv.Close()
	wg.Wait()
	b.replicas.CheckpointHighWatermarks()
	b.groups.Close()
	b.txns.Close()
	b.txnPeers.shutdown()
	if err := b.closeStores(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	b.logger.Info("shut down")
	return runErr
}

// AdvertisedEndpoint is the host and port clients are told to use for the
// named listener: advertised.listeners, with a port 0 replaced by the port
// actually bound and an empty host by the bound address.
func (b *Broker) AdvertisedEndpoint(listener string) (string, int32) {
	b.boundMu.RLock()
	bound := b.bound[listener]
	b.boundMu.RUnlock()
	for _, l := range b.cfg.AdvertisedListeners {
		if l.Name != listener {
			continue
		}
		host, port := l.Host, l.Port
		if port == 0 && bound != nil {
			port = bound.Port
		}
		if host == "" {
			host = "127.0.0.1"
			if bound != nil && !bound.IP.IsUnspecified() {
				host = bound.IP.String()
			}
		}
		return host, int32(port)
	}
	if bound != nil {
		return bound.IP.String(), int32(bound.Port)
	}
	return "127.0.0.1", 0
}

// Addr returns the bound address of the first listener, once Run serves.
func (b *Broker) Addr() string {
	if len(b.cfg.Listeners) == 0 || !b.serving.Load() {
		return ""
	}
	b.boundMu.RLock()
	defer b.boundMu.RUnlock()
	if a := b.bound[b.cfg.Listeners[0].Name]; a != nil {
		return a.String()
	}
	return ""
}
