package protocol

import (
	"errors"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are named after Kafka's JMX beans:
// kafka.network:type=RequestMetrics (requests, request_metrics.go) and
// kafka.server:type=socket-server-metrics,listener=L incoming/outgoing-byte-total.
type metrics struct {
	reg      prometheus.Registerer
	requests *requestMetrics
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
	// Connections per listener: socket-server-metrics connection-count,
	// connection-creation-total and connection-close-total, and the
	// connections closed at once by a limit (ours; Kafka only logs them).
	connCount    *prometheus.GaugeVec
	connCreation *prometheus.CounterVec
	connClose    *prometheus.CounterVec
	connRejected *prometheus.CounterVec
	// Authentications per listener, as Kafka's selector metrics count
	// them: successful- and failed-authentication-total,
	// successful- and failed-reauthentication-total, and
	// successful-authentication-no-reauth-total (a client that cannot
	// re-authenticate, KIP-368).
	authOK, authFailed, reauthOK, reauthFailed, authNoReauth *prometheus.CounterVec
}

// maxCachedKey bounds the api keys with request metrics; keys above it
// (none today) have none.
const maxCachedKey = 127

// newMetrics returns counters registered on reg, or nil counters (no-ops)
// when reg is nil. A second Server on the same registry shares the
// already-registered counters instead of failing.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_incoming_byte_total",
			Help: "Bytes read from client connections, size prefixes included.",
		}, []string{"listener"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_outgoing_byte_total",
			Help: "Bytes written to client connections, size prefixes included.",
		}, []string{"listener"}),
		connCreation: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_connection_creation_total",
			Help: "Connections accepted (socket-server-metrics connection-creation-total).",
		}, []string{"listener"}),
		connClose: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_connection_close_total",
			Help: "Accepted connections closed (socket-server-metrics connection-close-total).",
		}, []string{"listener"}),
		connRejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_connection_rejected_total",
			Help: "New connections closed at once because a limit was reached: max.connections, max.connections.per.ip, file descriptors.",
		}, []string{"listener", "limit"}),
	}
	authCounter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kafka_server_socket_server_metrics_" + name, Help: help}, []string{"listener"})
	}
	m.authOK = authCounter("successful_authentication_total", "Connections that authenticated (TLS handshake on SSL listeners, SASL on SASL ones).")
	m.authFailed = authCounter("failed_authentication_total", "Connections that failed to authenticate and were closed.")
	m.reauthOK = authCounter("successful_reauthentication_total", "SASL re-authentications that succeeded (KIP-368).")
	m.reauthFailed = authCounter("failed_reauthentication_total", "SASL re-authentications that failed.")
	m.authNoReauth = authCounter("successful_authentication_no_reauth_total", "Authentications by clients that cannot re-authenticate while connections.max.reauth.ms is set.")
	m.reg = reg
	connCount := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kafka_server_socket_server_metrics_connection_count",
		Help: "Open connections (socket-server-metrics connection-count).",
	}, []string{"listener"})
	if err := reg.Register(connCount); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		if connCount, _ = are.ExistingCollector.(*prometheus.GaugeVec); connCount == nil {
			return nil, err
		}
	}
	m.connCount = connCount
	m.requests = newRequestMetrics()
	if err := reg.Register(m.requests); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		if m.requests, _ = are.ExistingCollector.(*requestMetrics); m.requests == nil {
			return nil, err
		}
	}
	for _, c := range []**prometheus.CounterVec{&m.bytesIn, &m.bytesOut, &m.connCreation, &m.connClose, &m.connRejected,
		&m.authOK, &m.authFailed, &m.reauthOK, &m.reauthFailed, &m.authNoReauth} {
		if err := reg.Register(*c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, err
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, err
			}
			*c = existing
		}
	}
	return m, nil
}

// reqs is the request metrics, nil (no-ops) without a registry.
func (m *metrics) reqs() *requestMetrics {
	if m == nil {
		return nil
	}
	return m.requests
}

// connCounters are one listener's counters, resolved once per connection.
type connCounters struct {
	m        *metrics
	listener string
	in, out  prometheus.Counter
}

func (m *metrics) forListener(listener string) connCounters {
	if m == nil {
		return connCounters{}
	}
	return connCounters{m, listener, m.bytesIn.WithLabelValues(listener), m.bytesOut.WithLabelValues(listener)}
}

func (c connCounters) opened() {
	if c.m != nil {
		c.m.connCreation.WithLabelValues(c.listener).Inc()
		c.m.connCount.WithLabelValues(c.listener).Inc()
	}
}

func (c connCounters) closed() {
	if c.m != nil {
		c.m.connClose.WithLabelValues(c.listener).Inc()
		c.m.connCount.WithLabelValues(c.listener).Dec()
	}
}

func (c connCounters) rejected(limit string) {
	if c.m != nil {
		c.m.connRejected.WithLabelValues(c.listener, limit).Inc()
	}
}

// serverCollector reports a Server's memory pool and muted connections
// when scraped: SocketServer's MemoryPoolAvailable and MemoryPoolUsed
// gauges, socket-server-metrics MemoryPoolDepletedTimeTotal (ms), and the
// number of connections not read because the pool or queued.max.requests
// is exhausted (ours: Kafka mutes channels but does not count them).
type serverCollector struct {
	s                                *Server
	available, used, depleted, muted *prometheus.Desc
}

func (sc serverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sc.available
	ch <- sc.used
	ch <- sc.depleted
	ch <- sc.muted
}

func (sc serverCollector) Collect(ch chan<- prometheus.Metric) {
	used, available, depleted := sc.s.pool.stats(time.Now())
	if available < 0 {
		// Unlimited: Kafka's MemoryPool.NONE reports Long.MAX_VALUE.
		available = math.MaxInt64
	}
	ch <- prometheus.MustNewConstMetric(sc.available, prometheus.GaugeValue, float64(available))
	ch <- prometheus.MustNewConstMetric(sc.used, prometheus.GaugeValue, float64(used))
	ch <- prometheus.MustNewConstMetric(sc.depleted, prometheus.CounterValue, float64(depleted.Milliseconds()))
	ch <- prometheus.MustNewConstMetric(sc.muted, prometheus.GaugeValue, float64(sc.s.muted.Load()))
}

// observeServer registers s's collector; a second Server on the same
// registry (tests) keeps the first one's.
func (m *metrics) observeServer(s *Server) {
	if m == nil {
		return
	}
	sc := serverCollector{
		s:         s,
		available: prometheus.NewDesc("kafka_network_socketserver_memorypoolavailable", "Bytes of queued.max.request.bytes free (SocketServer MemoryPoolAvailable).", nil, nil),
		used:      prometheus.NewDesc("kafka_network_socketserver_memorypoolused", "Bytes of request frames being read or awaiting their response (SocketServer MemoryPoolUsed).", nil, nil),
		depleted:  prometheus.NewDesc("kafka_server_socket_server_metrics_memorypooldepletedtimetotal", "Milliseconds the request memory pool refused reservations (MemoryPoolDepletedTimeTotal).", nil, nil),
		muted:     prometheus.NewDesc("kafka_network_socketserver_mutedconnections", "Connections not read because the request memory pool or queued.max.requests is exhausted.", nil, nil),
	}
	if err := m.reg.Register(sc); err != nil {
		s.log.Warn("memory pool metrics not registered", "err", err)
	}
}

func (c connCounters) addIn(n int) {
	if c.in != nil {
		c.in.Add(float64(n))
	}
}

func (c connCounters) addOut(n int) {
	if c.out != nil {
		c.out.Add(float64(n))
	}
}

func (c connCounters) authSucceeded(reauth, noReauth bool) {
	switch {
	case c.m == nil:
	case reauth:
		c.m.reauthOK.WithLabelValues(c.listener).Inc()
	default:
		c.m.authOK.WithLabelValues(c.listener).Inc()
		if noReauth {
			c.m.authNoReauth.WithLabelValues(c.listener).Inc()
		}
	}
}

func (c connCounters) authFailed(reauth bool) {
	switch {
	case c.m == nil:
	case reauth:
		c.m.reauthFailed.WithLabelValues(c.listener).Inc()
	default:
		c.m.authFailed.WithLabelValues(c.listener).Inc()
	}
}
