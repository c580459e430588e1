package fetcher

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kbroker/kbroker/replica/throttle"
)

// BrokerEndpoint is a leader to fetch from: its broker id and the
// host:port of its inter-broker listener.
type BrokerEndpoint struct {
	ID   int32
	Addr string
}

// Config holds the follower-side replication settings, named after Kafka's
// replica.* broker configs (ReplicationConfigs.java). Zero fields take
// Kafka's defaults.
type Config struct {
	// BrokerID is this broker's id, sent as the fetch's replica id: the
	// leader tracks follower progress by it.
	BrokerID int32
	// BrokerEpoch is sent as ReplicaState.ReplicaEpoch on Fetch v15+. The
	// ZooKeeper-mode leader ignores it; 0 sends -1.
	BrokerEpoch int64
	// NumReplicaFetchers is num.replica.fetchers: fetchers per leader.
	NumReplicaFetchers int
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms.
	ReplicaFetchWaitMax time.Duration
	// ReplicaFetchMinBytes is replica.fetch.min.bytes.
	ReplicaFetchMinBytes int32
	// ReplicaFetchMaxBytes is replica.fetch.max.bytes, per partition. Not
	// absolute: the leader still returns a first batch that is larger.
	ReplicaFetchMaxBytes int32
	// ReplicaFetchResponseMaxBytes is replica.fetch.response.max.bytes.
	ReplicaFetchResponseMaxBytes int32
	// ReplicaFetchBackoff is replica.fetch.backoff.ms: the pause after a
	// partition error or a failed request.
	ReplicaFetchBackoff time.Duration
	// ReplicaSocketTimeout is replica.socket.timeout.ms: how long one
	// request may take before the connection is considered broken.
	ReplicaSocketTimeout time.Duration
	// FetchVersion is the highest Fetch version sent (IBP-dependent, as
	// MetadataVersion.fetchRequestVersion picks it). Topic ids are used from
	// v13, LastFetchedEpoch and diverging epochs from v12, ReplicaState from
	// v15.
	FetchVersion int16
	// TruncateOnFetch skips the OffsetForLeaderEpoch round when a partition
	// with leader epochs starts following and relies on the diverging epoch
	// of Fetch v12+ alone (Kafka at IBP >= 2.7-IV1). Off by default:
	// followers truncate with OffsetForLeaderEpoch when they become
	// followers, and also honour diverging epochs, which is safe whatever
	// the leader's Fetch version.
	TruncateOnFetch bool
	// Clock is the time source for back-offs; nil means the wall clock.
	Clock Clock
	// Registerer receives the ReplicaMaxLag gauge; nil registers nothing.
	Registerer prometheus.Registerer
	// Quota is the follower's replication quota (KIP-73): a throttled
	// partition that is not caught up is left out of a fetch while the
	// quota is exceeded. nil throttles nothing.
	Quota *throttle.Quota
}

// Kafka's defaults (ReplicationConfigs.java).
const (
	DefaultReplicaFetchWaitMax          = 500 * time.Millisecond
	DefaultReplicaFetchMinBytes         = 1
	DefaultReplicaFetchMaxBytes         = 1 << 20
	DefaultReplicaFetchResponseMaxBytes = 10 << 20
	DefaultReplicaFetchBackoff          = time.Second
	DefaultReplicaSocketTimeout         = 30 * time.Second
	DefaultFetchVersion                 = 16
)

// OffsetForLeaderEpoch v4 and ListOffsets v9 are what a 3.9 follower sends
// (docs/replication-reference.md, "Request versions").
const (
	offsetForLeaderEpochVersion = 4
	listOffsetsVersion          = 9
	// lastFetchedEpochVersion is the first Fetch version with
	// LastFetchedEpoch and DivergingEpoch (KIP-595/KIP-320 truncate on fetch).
	lastFetchedEpochVersion = 12
	// topicIDVersion is the first Fetch version keyed by topic id.
	topicIDVersion = 13
)

func (c Config) withDefaults() Config {
	if c.NumReplicaFetchers <= 0 {
		c.NumReplicaFetchers = 1
	}
	if c.ReplicaFetchWaitMax <= 0 {
		c.ReplicaFetchWaitMax = DefaultReplicaFetchWaitMax
	}
	if c.ReplicaFetchMinBytes <= 0 {
		c.ReplicaFetchMinBytes = DefaultReplicaFetchMinBytes
	}
	if c.ReplicaFetchMaxBytes <= 0 {
		c.ReplicaFetchMaxBytes = DefaultReplicaFetchMaxBytes
	}
	if c.ReplicaFetchResponseMaxBytes <= 0 {
		c.ReplicaFetchResponseMaxBytes = DefaultReplicaFetchResponseMaxBytes
	}
	if c.ReplicaFetchBackoff <= 0 {
		c.ReplicaFetchBackoff = DefaultReplicaFetchBackoff
	}
	if c.ReplicaSocketTimeout <= 0 {
		c.ReplicaSocketTimeout = DefaultReplicaSocketTimeout
	}
	if c.FetchVersion <= 0 {
		c.FetchVersion = DefaultFetchVersion
	}
	if c.BrokerEpoch == 0 {
		c.BrokerEpoch = -1
	}
	if c.Clock == nil {
		c.Clock = wallClock{}
	}
	return c
}

// Clock is the fetcher's time source, injected so tests control back-offs.
type Clock interface {
	Now() time.Time
	// After delivers once d has passed.
	After(d time.Duration) <-chan time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time                         { return time.Now() }
func (wallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
