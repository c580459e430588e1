package protocol

import (
	"errors"

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
}

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
	if m != nil {
		m.requests.WithLabelValues(kmsg.NameForKey(key)).Inc()
	}
}

func (m *metrics) in(listener string, n int) {
	if m != nil {
		m.bytesIn.WithLabelValues(listener).Add(float64(n))
	}
}

func (m *metrics) out(listener string, n int) {
	if m != nil {
		m.bytesOut.WithLabelValues(listener).Add(float64(n))
	}
}
