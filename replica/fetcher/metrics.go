package fetcher

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// lagMetric reports ReplicaFetcherManager's MaxLag gauge,
// kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica, and
// each followed partition's FetcherLagMetrics ConsumerLag,
// kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=
// ReplicaFetcherThread-<fetcher>-<leader>,topic=T,partition=P, at scrape
// time from the fetchers' partition states.
type lagMetric struct {
	reg       prometheus.Registerer
	collector prometheus.Collector
}

type lagCollector struct {
	m           *Manager
	maxLag, lag *prometheus.Desc
}

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.maxLag
	ch <- c.lag
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(c.maxLag, prometheus.GaugeValue, float64(c.m.MaxLag()))
	c.m.eachLag(func(clientID, topic string, partition int32, lag int64) {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(lag), clientID, topic, strconv.Itoa(int(partition)))
	})
}

func newLagMetric(reg prometheus.Registerer, m *Manager, logger *slog.Logger) *lagMetric {
	l := &lagMetric{}
	if reg == nil {
		return l
	}
	c := lagCollector{
		m: m,
		maxLag: prometheus.NewDesc("kafka_server_replicafetchermanager_maxlag",
			"Largest lag in messages between a followed partition's leader HW and this broker's fetch offset.", nil, prometheus.Labels{"clientId": "Replica"}),
		lag: prometheus.NewDesc("kafka_server_fetcherlagmetrics_consumerlag",
			"Messages between a followed partition's leader HW and this broker's fetch offset (FetcherLagMetrics ConsumerLag).",
			[]string{"clientId", "topic", "partition"}, nil),
	}
	if err := reg.Register(c); err != nil {
		// A second manager on the same registry (tests, restarts in one
		// process) must not stop replication over a metric.
		logger.Warn("replica fetcher: lag gauges not registered", "err", err)
		return l
	}
	l.reg, l.collector = reg, c
	return l
}

func (l *lagMetric) unregister() {
	if l.reg != nil {
		l.reg.Unregister(l.collector)
		l.reg = nil
	}
}

// threadName is Kafka's ReplicaFetcherThread name, its metrics' clientId.
func threadName(fetcherID int, leaderID int32) string {
	return fmt.Sprintf("ReplicaFetcherThread-%d-%d", fetcherID, leaderID)
}
