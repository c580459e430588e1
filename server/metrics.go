package server

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kbroker/kbroker/replica"
)

// Broker metrics, named after Kafka's JMX beans (kafka.server:type=
// ReplicaManager,name=X becomes kafka_server_replicamanager_x). Gauges are
// computed at scrape time from the hosted partitions; the ISR change rates
// are counters (Prometheus derives the per-second rate).

type brokerMetrics struct {
	b *Broker

	leaderCount, partitionCount, underReplicated, underMinIsr *prometheus.Desc
	hw, leo, lsoLag                                           *prometheus.Desc
	offlineReplicas, offlineLogDirs                           *prometheus.Desc
	logSize, logSegments, logStart                            *prometheus.Desc

	isrShrinks, isrExpands, failedIsrUpdates prometheus.Counter
}

func newBrokerMetrics(b *Broker) *brokerMetrics {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	return &brokerMetrics{
		b:               b,
		leaderCount:     desc("kafka_server_replicamanager_leadercount", "Partitions this broker leads (ReplicaManager LeaderCount)."),
		partitionCount:  desc("kafka_server_replicamanager_partitioncount", "Partitions this broker hosts (ReplicaManager PartitionCount)."),
		underReplicated: desc("kafka_server_replicamanager_underreplicatedpartitions", "Led partitions whose ISR is smaller than their replicas."),
		underMinIsr:     desc("kafka_server_replicamanager_underminisrpartitioncount", "Led partitions whose ISR is below min.insync.replicas."),
		hw:              desc("kafka_log_partition_highwatermark", "High watermark per hosted partition (debugging).", "topic", "partition"),
		leo:             desc("kafka_log_log_logendoffset", "Log end offset per hosted partition (Kafka's Log LogEndOffset).", "topic", "partition"),
		lsoLag: desc("kafka_cluster_partition_laststableoffsetlag",
			"High watermark minus last stable offset per hosted partition: how far open transactions hold read_committed consumers back (Kafka's Partition LastStableOffsetLag).", "topic", "partition"),
		logSize:         desc("kafka_log_log_size", "Bytes of a hosted partition's log (Log Size).", "topic", "partition"),
		logSegments:     desc("kafka_log_log_numlogsegments", "Segments of a hosted partition's log (Log NumLogSegments).", "topic", "partition"),
		logStart:        desc("kafka_log_log_logstartoffset", "Log start offset of a hosted partition (Log LogStartOffset).", "topic", "partition"),
		offlineReplicas: desc("kafka_server_replicamanager_offlinereplicacount", "Hosted replicas on a failed log dir (ReplicaManager OfflineReplicaCount)."),
		offlineLogDirs:  desc("kafka_log_logmanager_offlinelogdirectorycount", "Log dirs taken offline by a storage failure (LogManager OfflineLogDirectoryCount)."),
		isrShrinks:      counter("kafka_server_replicamanager_isrshrinks_total", "ISR shrinks made by this broker as leader (IsrShrinksPerSec)."),
		isrExpands:      counter("kafka_server_replicamanager_isrexpands_total", "ISR expansions made by this broker as leader (IsrExpandsPerSec)."),
		failedIsrUpdates: counter("kafka_server_replicamanager_failedisrupdates_total",
			"ISR changes whose state-znode write failed (FailedIsrUpdatesPerSec)."),
	}
}

// isrChanged feeds the ISR change counters (replica.Options.IsrChanged).
func (m *brokerMetrics) isrChanged(kind replica.IsrChangeKind, failed bool) {
	switch {
	case failed:
		m.failedIsrUpdates.Inc()
	case kind == replica.IsrShrink:
		m.isrShrinks.Inc()
	case kind == replica.IsrExpand:
		m.isrExpands.Inc()
	}
}

func (m *brokerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.leaderCount, m.partitionCount, m.underReplicated, m.underMinIsr, m.hw, m.leo, m.lsoLag, m.logSize, m.logSegments, m.logStart, m.offlineReplicas, m.offlineLogDirs} {
		ch <- d
	}
	m.isrShrinks.Describe(ch)
	m.isrExpands.Describe(ch)
	m.failedIsrUpdates.Describe(ch)
}

func (m *brokerMetrics) Collect(ch chan<- prometheus.Metric) {
	var leaders, under, underMin, offline float64
	hosted := m.b.replicas.Partitions()
	for _, p := range hosted {
		if p.Offline() {
			offline++
		}
		s := p.Status()
		if s.Leader {
			leaders++
		}
		if s.UnderReplicated {
			under++
		}
		if s.UnderMinIsr {
			underMin++
		}
		idx := strconv.Itoa(int(p.Index))
		ch <- prometheus.MustNewConstMetric(m.hw, prometheus.GaugeValue, float64(s.HighWatermark), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(m.leo, prometheus.GaugeValue, float64(s.LogEndOffset), p.Topic, idx)
		ch <- prometheus.MustNewConstMetric(m.lsoLag, prometheus.GaugeValue, float64(s.HighWatermark-s.LastStableOffset), p.Topic, idx)
		// Kafka removes a log's gauges when its dir fails.
		if l := p.Log(); l != nil && !p.Offline() {
			ch <- prometheus.MustNewConstMetric(m.logSize, prometheus.GaugeValue, float64(l.Size()), p.Topic, idx)
			ch <- prometheus.MustNewConstMetric(m.logStart, prometheus.GaugeValue, float64(l.LogStartOffset()), p.Topic, idx)
			if sc, ok := l.(interface{ NumSegments() int }); ok {
				ch <- prometheus.MustNewConstMetric(m.logSegments, prometheus.GaugeValue, float64(sc.NumSegments()), p.Topic, idx)
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(m.leaderCount, prometheus.GaugeValue, leaders)
	ch <- prometheus.MustNewConstMetric(m.partitionCount, prometheus.GaugeValue, float64(len(hosted)))
	ch <- prometheus.MustNewConstMetric(m.underReplicated, prometheus.GaugeValue, under)
	ch <- prometheus.MustNewConstMetric(m.underMinIsr, prometheus.GaugeValue, underMin)
	ch <- prometheus.MustNewConstMetric(m.offlineReplicas, prometheus.GaugeValue, offline)
	ch <- prometheus.MustNewConstMetric(m.offlineLogDirs, prometheus.GaugeValue, float64(len(m.b.logs.OfflineDirs())))
	m.isrShrinks.Collect(ch)
	m.isrExpands.Collect(ch)
	m.failedIsrUpdates.Collect(ch)
}
