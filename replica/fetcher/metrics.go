package fetcher

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
)

// lagMetric is ReplicaFetcherManager's MaxLag gauge,
// kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica.
type lagMetric struct {
	reg   prometheus.Registerer
	gauge prometheus.Collector
}

func newLagMetric(reg prometheus.Registerer, maxLag func() int64, logger *slog.Logger) *lagMetric {
	l := &lagMetric{}
	if reg == nil {
		return l
	}
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "kafka_server_replicafetchermanager_maxlag",
		Help:        "Largest lag in messages between a followed partition's leader HW and this broker's fetch offset.",
		ConstLabels: prometheus.Labels{"clientId": "Replica"},
	}, func() float64 { return float64(maxLag()) })
	if err := reg.Register(g); err != nil {
		// A second manager on the same registry (tests, restarts in one
		// process) must not stop replication over a metric.
		logger.Warn("replica fetcher: MaxLag gauge not registered", "err", err)
		return l
	}
	l.reg, l.gauge = reg, g
	return l
}

func (l *lagMetric) unregister() {
	if l.reg != nil {
		l.reg.Unregister(l.gauge)
		l.reg = nil
	}
}
