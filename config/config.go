package config

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/kbroker/kbroker/metadataversion"
)

// Config is a broker's static configuration, read once at start-up.
// Durations that Kafka spells in ms, minutes, hours or seconds are
// time.Duration; Kafka's "forever" (Long.MaxValue ms) saturates to the
// largest Duration, and a negative retention means "keep forever".
type Config struct {
	BrokerID int32
	// Listeners are the sockets to bind. An empty Host binds every interface.
	Listeners []Listener
	// AdvertisedListeners are what clients are told to connect to, one per
	// listener and in the same names. Derived from Listeners when unset; an
	// empty or wildcard bound host is then advertised as 127.0.0.1 (Kafka
	// would use the canonical host name, which is often unresolvable in
	// containers and tests). Port 0 means "the port that was bound".
	AdvertisedListeners []Listener
	// ListenerSecurityProtocolMap maps listener names to security protocols.
	// PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL.
	ListenerSecurityProtocolMap map[string]string
	// InterBrokerListenerName names the listener brokers use among
	// themselves; Kafka's default is the listener named after
	// security.inter.broker.protocol.
	InterBrokerListenerName string
	// InterBrokerProtocolVersion is inter.broker.protocol.version: what
	// this broker writes and sends where the other brokers and the
	// controller read it (docs/ibp.md).
	InterBrokerProtocolVersion metadataversion.Version

	LogDirs                  []string
	NumPartitions            int32
	DefaultReplicationFactor int16
	AutoCreateTopicsEnable   bool
	DeleteTopicEnable        bool

	LogSegmentBytes int64
	LogRoll         time.Duration // log.roll.ms, else log.roll.hours
	LogRollJitter   time.Duration // log.roll.jitter.ms, else .hours
	// LogRetention is log.retention.ms, else .minutes, else .hours;
	// negative means forever.
	LogRetention                          time.Duration
	LogRetentionBytes                     int64 // -1 = unlimited
	LogRetentionCheckInterval             time.Duration
	LogSegmentDeleteDelay                 time.Duration
	ProducerIDExpiration                  time.Duration // producer.id.expiration.ms
	LogFlushIntervalMessages              int64
	LogFlushInterval                      time.Duration // unset = never
	LogFlushOffsetCheckpointInterval      time.Duration
	LogFlushStartOffsetCheckpointInterval time.Duration
	LogIndexIntervalBytes                 int32
	LogIndexSizeMaxBytes                  int32
	LogCleanupPolicy                      []string
	LogCleanerDeleteRetention             time.Duration
	LogCleanerMinCompactionLag            time.Duration
	LogCleanerMaxCompactionLag            time.Duration
	LogCleanerMinCleanableRatio           float64
	LogMessageTimestampType               string // CreateTime or LogAppendTime
	LogPreallocate                        bool
	CompressionType                       string
	MessageMaxBytes                       int32
	SocketRequestMaxBytes                 int32
	ConnectionsMaxIdle                    time.Duration
	// QueuedMaxRequestBytes bounds the bytes of requests being read or
	// awaiting their response; 0 means unlimited (Kafka's -1).
	QueuedMaxRequestBytes int64
	QueuedMaxRequests     int32
	// QuotaWindowNum samples of QuotaWindowSizeSeconds each measure
	// client quotas (Kafka's ClientQuotaManagerConfig).
	QuotaWindowNum               int32
	QuotaWindowSizeSeconds       int32
	MaxConnections               int32
	MaxConnectionsPerIP          int32
	MaxConnectionsPerIPOverrides map[string]int32
	MaxConnectionCreationRate    int32

	OffsetsTopicNumPartitions int32
	// OffsetsTopicReplicationFactor is Kafka's 3; a standalone broker clamps
	// it to the number of live brokers when it creates __consumer_offsets.
	OffsetsTopicReplicationFactor int16
	OffsetsRetention              time.Duration
	GroupInitialRebalanceDelay    time.Duration
	GroupMinSessionTimeout        time.Duration
	GroupMaxSessionTimeout        time.Duration
	GroupMaxSize                  int32

	// The transaction coordinator's settings (transaction.state.log.*,
	// transaction.*, transactional.id.expiration.ms). A standalone broker
	// clamps the replication factor and min ISR of __transaction_state to
	// the live brokers when it creates the topic.
	TransactionStateLogNumPartitions        int32
	TransactionStateLogReplicationFactor    int16
	TransactionStateLogMinIsr               int32
	TransactionStateLogSegmentBytes         int32
	TransactionMaxTimeout                   time.Duration
	TransactionalIDExpiration               time.Duration
	TransactionAbortTimedOutCleanupInterval time.Duration
	TransactionRemoveExpiredCleanupInterval time.Duration
	TransactionPartitionVerificationEnable  bool

	MinInsyncReplicas           int32
	UncleanLeaderElectionEnable bool
	BrokerRack                  string
	// ReplicaSelectorClass is replica.selector.class: "" (unset) or one
	// of Kafka's two selectors, by class name (ReplicaSelectorClasses).
	ReplicaSelectorClass string

	ZookeeperConnect           string
	ZookeeperSessionTimeout    time.Duration
	ZookeeperConnectionTimeout time.Duration // unset = session timeout

	ControlledShutdownEnable           bool
	ControlledShutdownMaxRetries       int32
	ControlledShutdownRetryBackoff     time.Duration
	AutoLeaderRebalanceEnable          bool
	LeaderImbalanceCheckInterval       time.Duration
	LeaderImbalancePerBrokerPercentage int32

	ReplicaLagTimeMax                      time.Duration
	ReplicaFetchWaitMax                    time.Duration
	ReplicaFetchMinBytes                   int32
	ReplicaFetchMaxBytes                   int32
	ReplicaFetchResponseMaxBytes           int32
	ReplicaFetchBackoff                    time.Duration
	ReplicaSocketTimeout                   time.Duration
	ReplicaHighWatermarkCheckpointInterval time.Duration
	NumReplicaFetchers                     int32
	NumRecoveryThreadsPerDataDir           int32 // num.recovery.threads.per.data.dir

	// AuthorizerClassName is authorizer.class.name; empty lets every
	// request through, as Kafka without an authorizer does.
	AuthorizerClassName string
	// AllowEveryoneIfNoACLFound is allow.everyone.if.no.acl.found.
	AllowEveryoneIfNoACLFound bool

	// MetricsListener is host:port serving Prometheus /metrics; empty = off.
	MetricsListener string
	// PprofEnable adds net/http/pprof under /debug/pprof on MetricsListener.
	PprofEnable bool
	// BrokerProbeInterval paces the controller's liveness probes of the
	// brokers (and theirs of it); zero: off.
	BrokerProbeInterval time.Duration
	// ReplicaAuditInterval is replica.audit.interval.ms, kbroker's own
	// (docs/replica-audit.md): how often a follower compares its replicas
	// with their leaders; zero: off.
	ReplicaAuditInterval time.Duration
	// ReplicaAuditMaxBytesPerSec is replica.audit.max.bytes.per.sec: the
	// audit's bound on bytes read (leaders' and local together).
	ReplicaAuditMaxBytesPerSec int64

	// values holds the text of every known key, set or default ("" for an
	// unset nullable key); set marks the keys the file or an override gave.
	values map[string]string
	set    map[string]bool
	// listenerOverrides holds listener.name.<l>.<key> values by upper-case
	// listener name, then key.
	listenerOverrides map[string]map[string]string
	// static is every key the file and overrides gave, as text (unknown
	// keys too); dynDefault and dynBroker are the dynamic layers a
	// Reconfigured config was built with (nil for the static one).
	static                map[string]string
	dynDefault, dynBroker map[string]string
}

// Listener is one NAME://host:port entry of listeners or advertised.listeners.
type Listener struct {
	Name string
	Host string
	Port int
}

// Load reads the properties file at path, then applies overrides
// ("key=value", later wins), and returns the typed configuration. Unknown
// keys come back as warnings for the caller to log; a bad value is an
// error naming the key and the value.
func Load(path string, overrides []string) (*Config, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	props, err := parseProperties(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	raw := make(map[string]string, len(props)+len(overrides))
	for _, p := range props {
		raw[p.key] = p.value
	}
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("override %q: want key=value", o)
		}
		raw[k] = strings.TrimSpace(v)
	}
	return FromMap(raw)
}

// FromMap builds a Config from already-parsed properties (tests, embedding).
func FromMap(raw map[string]string) (*Config, []string, error) {
	c := &Config{values: make(map[string]string, len(brokerDefs)), set: make(map[string]bool, len(raw)), static: copyMap(raw)}
	var warnings []string
	for _, k := range sortedKeys(raw) {
		if _, ok := brokerDefIndex[k]; !ok {
			if c.acceptListenerOverride(k, raw[k]) {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("unknown configuration %q (value %q) is ignored", k, raw[k]))
			continue
		}
		c.set[k] = true
	}
	for _, d := range brokerDefs {
		v, ok := raw[d.name]
		if !ok {
			v = d.def
		}
		c.values[d.name] = v
		if v == "" && d.nullable {
			continue
		}
		if err := d.apply(c, v); err != nil {
			return nil, warnings, &ValueError{Key: d.name, Value: v, Reason: err.Error()}
		}
	}
	if err := c.derive(); err != nil {
		return nil, warnings, err
	}
	return c, warnings, nil
}

// ValueError is a configuration value Kafka would refuse, worded like
// Kafka's ConfigException so that tools and people recognise it.
type ValueError struct {
	Key, Value, Reason string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("Invalid value %s for configuration %s: %s", e.Value, e.Key, e.Reason)
}

// Standalone reports a broker without ZooKeeper: one broker, metadata kept
// locally.
func (c *Config) Standalone() bool { return c.ZookeeperConnect == "" }

// IsSet reports whether the file or an override gave key.
func (c *Config) IsSet(key string) bool { return c.set[key] }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
