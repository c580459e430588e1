package protocol

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults, named after the Kafka settings they mirror.
const (
	// DefaultMaxRequestSize is socket.request.max.bytes.
	DefaultMaxRequestSize = 104857600
	// DefaultMaxInFlightPerConn bounds pipelined requests per connection.
	// Kafka itself serves one request per connection at a time (it mutes
	// the channel); we pipeline, so the bound is ours.
	DefaultMaxInFlightPerConn = 100
	// DefaultIdleTimeout is connections.max.idle.ms.
	DefaultIdleTimeout = 600000 * time.Millisecond
	// DefaultQueuedMaxRequests is queued.max.requests.
	DefaultQueuedMaxRequests = 500
	// DefaultStallGrace is how long a connection holding pool memory may
	// make no progress while others wait for room before it is closed.
	DefaultStallGrace = time.Second
)

// ServerConfig configures a Server. Zero fields take the defaults above.
type ServerConfig struct {
	// MaxRequestSize is socket.request.max.bytes: a larger frame closes
	// the connection.
	MaxRequestSize int
	// MaxInFlightPerConn is how many requests of one connection may await
	// their response; the connection is not read while it is full.
	MaxInFlightPerConn int
	// IdleTimeout is connections.max.idle.ms: a connection with no bytes
	// read or written for this long is closed.
	IdleTimeout time.Duration
	// QueuedMaxRequestBytes is queued.max.request.bytes: the bytes of
	// request frames being read or awaiting their response, broker-wide.
	// Zero means unlimited.
	QueuedMaxRequestBytes int64
	// QueuedMaxRequests is queued.max.requests: requests read whose
	// handling has not finished, broker-wide.
	QueuedMaxRequests int
	// MaxConnections, MaxConnectionsPerIP (with overrides by host or ip)
	// and MaxConnectionCreationRate (per second) are Kafka's connection
	// quotas; zero values mean unlimited.
	MaxConnections               int
	MaxConnectionsPerIP          int
	MaxConnectionsPerIPOverrides map[string]int
	MaxConnectionCreationRate    int
	// InterBrokerListener is exempt from MaxConnections and the creation
	// rate, as in Kafka.
	InterBrokerListener string
	// StallGrace: see DefaultStallGrace.
	StallGrace time.Duration
	// Registerer, when set, receives the request and byte counters.
	Registerer prometheus.Registerer
}

func (c ServerConfig) withDefaults() ServerConfig {
	if c.MaxRequestSize <= 0 {
		c.MaxRequestSize = DefaultMaxRequestSize
	}
	if c.MaxInFlightPerConn <= 0 {
		c.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.QueuedMaxRequests <= 0 {
		c.QueuedMaxRequests = DefaultQueuedMaxRequests
	}
	if c.MaxConnections <= 0 {
		c.MaxConnections = maxInt32
	}
	if c.MaxConnectionsPerIP <= 0 && len(c.MaxConnectionsPerIPOverrides) == 0 {
		c.MaxConnectionsPerIP = maxInt32
	}
	if c.StallGrace <= 0 {
		c.StallGrace = DefaultStallGrace
	}
	return c
}
