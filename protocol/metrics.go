package protocol

import (
	"errors"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metrics are named after Kafka's JMX beans:
// kafka.network:type=RequestMetrics,name=RequestsPerSec,request=X and
// kafka.server:type=socket-server-metrics,listener=L incoming/outgoing-byte-total.
type metrics struct {
	requests *prometheus.CounterVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec
	// byKey caches requests' child per api key: WithLabelValues hashes the
	// label and takes the vector's lock, once per request otherwise, on
	// every connection at once.
	byKey [maxCachedKey + 1]atomic.Pointer[prometheus.Counter]
}

// maxCachedKey bounds byKey; keys above it (none today) take the slow path.
const maxCachedKey = 127

// newMetrics returns counters registered on reg, or nil counters (no-ops)
// when reg is nil. A second Server on the same registry shares the
// already-registered counters instead of failing.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_network_requestmetrics_requests_total",
			Help: "Requests received, by API (RequestMetrics RequestsPerSec).",
		}, []string{"request"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_incoming_byte_total",
			Help: "Bytes read from client connections, size prefixes included.",
		}, []string{"listener"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kafka_server_socket_server_metrics_outgoing_byte_total",
			Help: "Bytes written to client connections, size prefixes included.",
		}, []string{"listener"}),
	}
	for _, c := range []**prometheus.CounterVec{&m.requests, &m.bytesIn, &m.bytesOut} {
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

func (m *metrics) request(key int16) {
	if m == nil {
		return
	}
	if key < 0 || key > maxCachedKey {
		m.requests.WithLabelValues(kmsg.NameForKey(key)).Inc()
		return
	}
	c := m.byKey[key].Load()
	if c == nil {
		// Racing first requests may both resolve it: the same child.
		child := m.requests.WithLabelValues(kmsg.NameForKey(key))
		c = &child
		m.byKey[key].Store(c)
	}
	(*c).Inc()
}

// connCounters are one connection's byte counters, resolved once.
type connCounters struct{ in, out prometheus.Counter }

func (m *metrics) forListener(listener string) connCounters {
	if m == nil {
		return connCounters{}
	}
	return connCounters{m.bytesIn.WithLabelValues(listener), m.bytesOut.WithLabelValues(listener)}
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
