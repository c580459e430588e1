package txn

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// loadTimeWindow is the window of Kafka's partition-load-time sensor
// (metrics.sample.window.ms × metrics.num.samples: 30 s).
const loadTimeWindow = 30 * time.Second

// maxLoadSamples bounds the samples kept for the window.
const maxLoadSamples = 1024

type loadSample struct {
	at   time.Time
	took time.Duration
}

// coordinatorMetrics keeps what the gauges read.
type coordinatorMetrics struct {
	mu    sync.Mutex
	loads []loadSample
}

func newCoordinatorMetrics() *coordinatorMetrics { return &coordinatorMetrics{} }

func (m *coordinatorMetrics) recordLoad(at time.Time, took time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads = append(m.loads, loadSample{at, took})
	if len(m.loads) > maxLoadSamples {
		m.loads = append(m.loads[:0], m.loads[len(m.loads)-maxLoadSamples:]...)
	}
}

// loadTimes returns the max and average load time in ms over the window;
// NaN without a load in it, as Kafka's Max and Avg stats report.
func (m *coordinatorMetrics) loadTimes(now time.Time) (maxMs, avgMs float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	maxMs, sum, n := math.Inf(-1), 0.0, 0
	for _, s := range m.loads {
		if now.Sub(s.at) > loadTimeWindow {
			continue
		}
		ms := float64(s.took) / float64(time.Millisecond)
		maxMs = math.Max(maxMs, ms)
		sum += ms
		n++
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return maxMs, sum / float64(n)
}

// markerQueueSizes are TransactionMarkerChannelManager's gauges: partitions
// whose markers wait for a leader, and completions whose append to
// __transaction_state waits for a retry.
func (c *Coordinator) markerQueueSizes() (unknownDestination, logAppendRetry int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pc := range c.completions {
		unknownDestination += pc.unknownDest
		if pc.appendRetry {
			logAppendRetry++
		}
	}
	return unknownDestination, logAppendRetry
}

// RegisterMetrics registers the coordinator's gauges, named after Kafka's
// JMX metrics: kafka.server:type=transaction-coordinator-metrics
// partition-load-time-max and -avg, and
// kafka.coordinator.transaction:type=TransactionMarkerChannelManager
// UnknownDestinationQueueSize and LogAppendRetryQueueSize. A nil reg does
// nothing. The returned function unregisters them.
func (c *Coordinator) RegisterMetrics(reg prometheus.Registerer) (unregister func(), err error) {
	if reg == nil {
		return func() {}, nil
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	collectors := []prometheus.Collector{
		gauge("kafka_server_transaction_coordinator_metrics_partition_load_time_max",
			"The max time in ms it took to load the __transaction_state partitions in the last 30 s.",
			func() float64 { v, _ := c.metrics.loadTimes(c.clock.Now()); return v }),
		gauge("kafka_server_transaction_coordinator_metrics_partition_load_time_avg",
			"The average time in ms it took to load the __transaction_state partitions in the last 30 s.",
			func() float64 { _, v := c.metrics.loadTimes(c.clock.Now()); return v }),
		gauge("kafka_coordinator_transaction_transactionmarkerchannelmanager_unknowndestinationqueuesize",
			"Transaction markers waiting for their partition to have a leader.",
			func() float64 { v, _ := c.markerQueueSizes(); return float64(v) }),
		gauge("kafka_coordinator_transaction_transactionmarkerchannelmanager_logappendretryqueuesize",
			"Transaction completions waiting to retry their append to __transaction_state.",
			func() float64 { _, v := c.markerQueueSizes(); return float64(v) }),
	}
	var registered []prometheus.Collector
	unregister = func() {
		for _, col := range registered {
			reg.Unregister(col)
		}
	}
	for _, col := range collectors {
		if err := reg.Register(col); err != nil {
			unregister()
			return func() {}, errors.Join(errors.New("registering transaction coordinator metrics"), err)
		}
		registered = append(registered, col)
	}
	return unregister, nil
}
