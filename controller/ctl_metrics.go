package controller

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are KafkaController's JMX gauges
// (kafka.controller:type=KafkaController,name=X), named for Prometheus as
// kafka_controller_kafkacontroller_<x in lower case>. They read atomics the
// event loop sets after every event; a broker that is not the controller
// reports 0 for all of them.
type Metrics struct {
	active          atomic.Int64
	epoch           atomic.Int64
	globalPartition atomic.Int64
	offline         atomic.Int64
	globalTopic     atomic.Int64
	imbalance       atomic.Int64
}

// NewMetrics registers the controller gauges with reg (nil: none).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{}
	if reg == nil {
		return m, nil
	}
	gauge := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "kafka_controller",
			Subsystem: "kafkacontroller",
			Name:      name,
			Help:      help,
		}, func() float64 { return float64(v.Load()) })
	}
	for _, c := range []prometheus.Collector{
		gauge("activecontrollercount", "1 on the active controller, else 0 (ActiveControllerCount).", &m.active),
		gauge("controllerepoch", "Epoch of this broker's controller tenure, 0 when not controller (ControllerEpoch).", &m.epoch),
		gauge("globalpartitioncount", "Partitions in the cluster, as the controller knows them (GlobalPartitionCount).", &m.globalPartition),
		gauge("offlinepartitionscount", "Partitions without a live leader (OfflinePartitionsCount).", &m.offline),
		gauge("globaltopiccount", "Topics in the cluster, as the controller knows them (GlobalTopicCount).", &m.globalTopic),
		gauge("preferredreplicaimbalancecount", "Partitions not led by their preferred replica (PreferredReplicaImbalanceCount).", &m.imbalance),
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) update(epoch int32, partitions, offline, topics, imbalance int) {
	m.active.Store(1)
	m.epoch.Store(int64(epoch))
	m.globalPartition.Store(int64(partitions))
	m.offline.Store(int64(offline))
	m.globalTopic.Store(int64(topics))
	m.imbalance.Store(int64(imbalance))
}

func (m *Metrics) resign() {
	m.active.Store(0)
	m.epoch.Store(0)
	m.globalPartition.Store(0)
	m.offline.Store(0)
	m.globalTopic.Store(0)
	m.imbalance.Store(0)
}
