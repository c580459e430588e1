package server

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/protocol"
)

// serverConfig is the connection layer's share of the broker config.
func serverConfig(cfg *config.Config, reg prometheus.Registerer) protocol.ServerConfig {
	overrides := make(map[string]int, len(cfg.MaxConnectionsPerIPOverrides))
	for host, n := range cfg.MaxConnectionsPerIPOverrides {
		overrides[host] = int(n)
	}
	// Kafka exempts the inter-broker listener from max.connections and
	// the creation rate even when clients share it, which leaves a broker
	// with one listener without those limits; only a listener of its own
	// is exempt here.
	interBroker := ""
	if len(cfg.Listeners) > 1 {
		interBroker = cfg.InterBrokerListenerName
	}
	return protocol.ServerConfig{
		MaxRequestSize:               int(cfg.SocketRequestMaxBytes),
		IdleTimeout:                  cfg.ConnectionsMaxIdle,
		QueuedMaxRequestBytes:        cfg.QueuedMaxRequestBytes,
		QueuedMaxRequests:            int(cfg.QueuedMaxRequests),
		MaxConnections:               int(cfg.MaxConnections),
		MaxConnectionsPerIP:          int(cfg.MaxConnectionsPerIP),
		MaxConnectionsPerIPOverrides: overrides,
		MaxConnectionCreationRate:    int(cfg.MaxConnectionCreationRate),
		InterBrokerListener:          interBroker,
		Registerer:                   reg,
	}
}

// heapAllowance is what the broker may hold besides request frames before
// the garbage collector works harder: topic and group state, indexes'
// bookkeeping, fetch sessions and connection buffers, with room to spare.
const heapAllowance = 512 << 20

// boundHeap sets the Go runtime's soft memory limit to the request pool
// plus heapAllowance, unless GOMEMLIMIT was given: the pool bounds the
// request bytes in use, and the limit makes the collector return what
// they leave behind before the heap grows far beyond it.
func boundHeap(cfg *config.Config, logger *slog.Logger) {
	if cfg.QueuedMaxRequestBytes <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := cfg.QueuedMaxRequestBytes + heapAllowance
	debug.SetMemoryLimit(limit)
	logger.Info("request memory bounded", "queued.max.request.bytes", cfg.QueuedMaxRequestBytes, "go_memory_limit", limit)
}
