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
	return c
}
