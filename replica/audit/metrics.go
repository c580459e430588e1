package audit

import (
	"log/slog"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kbroker/kbroker/replica"
)

// metrics are the audit's own series (Kafka has no such audit, so no JMX
// name to follow): kbroker_replica_audit_*.
type metrics struct {
	reg        prometheus.Registerer
	collectors []prometheus.Collector

	divergent *prometheus.GaugeVec
	compared  prometheus.Counter
	bytes     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, numDivergent func() int, logger *slog.Logger) *metrics {
	m := &metrics{
		divergent: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kbroker_replica_audit_divergent",
			Help: "1 for each followed partition whose replica here differs from its leader's below the high watermark.",
		}, []string{"topic", "partition"}),
		compared: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kbroker_replica_audit_batches_compared_total",
			Help: "Record batches found equal (offsets, leader epoch, CRC) on this follower and its leader.",
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "kbroker_replica_audit_bytes_total",
			Help: "Bytes the replica audit read from leaders and from this broker's logs.",
		}),
	}
	if reg == nil {
		return m
	}
	count := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "kbroker_replica_audit_divergent_partitions",
		Help: "Followed partitions whose replica here differs from its leader's below the high watermark.",
	}, func() float64 { return float64(numDivergent()) })
	for _, c := range []prometheus.Collector{count, m.divergent, m.compared, m.bytes} {
		if err := reg.Register(c); err != nil {
			// A second auditor on the same registry (tests) must not stop
			// the broker over a metric.
			logger.Warn("replica audit: metric not registered", "err", err)
			continue
		}
		m.collectors = append(m.collectors, c)
	}
	m.reg = reg
	return m
}

func (m *metrics) set(tp replica.TopicPartition) {
	m.divergent.WithLabelValues(tp.Topic, strconv.Itoa(int(tp.Partition))).Set(1)
}

func (m *metrics) clear(tp replica.TopicPartition) {
	m.divergent.DeleteLabelValues(tp.Topic, strconv.Itoa(int(tp.Partition)))
}

func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors {
		m.reg.Unregister(c)
	}
	m.reg, m.collectors = nil, nil
}
