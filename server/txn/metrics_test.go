package txn

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func gaugeValues(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[mf.GetName()] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	h := newHarness(t)
	if _, err := h.c.RegisterMetrics(nil); err != nil {
		t.Fatalf("nil registry: %v", err)
	}
	reg := prometheus.NewRegistry()
	unregister, err := h.c.RegisterMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	const (
		loadMax = "kafka_server_transaction_coordinator_metrics_partition_load_time_max"
		loadAvg = "kafka_server_transaction_coordinator_metrics_partition_load_time_avg"
		unknown = "kafka_coordinator_transaction_transactionmarkerchannelmanager_unknowndestinationqueuesize"
		retry   = "kafka_coordinator_transaction_transactionmarkerchannelmanager_logappendretryqueuesize"
	)
	v := gaugeValues(t, reg)
	for _, name := range []string{loadMax, loadAvg, unknown, retry} {
		if _, ok := v[name]; !ok {
			t.Fatalf("%s missing: %v", name, v)
		}
	}
	// The harness loaded its partitions instantly, at t0.
	if v[loadMax] != 0 || v[loadAvg] != 0 {
		t.Fatalf("load times %v %v", v[loadMax], v[loadAvg])
	}
	h.clock.Advance(31 * time.Second)
	if v := gaugeValues(t, reg); !math.IsNaN(v[loadMax]) {
		t.Fatalf("load time outside the window: %v", v[loadMax])
	}

	pid, epoch := openTxn(h, "tx", tp("a", 0))
	h.markers.failNext(map[TopicPartition]error{tp("a", 0): errTransport})
	h.wantCode("commit", h.end("tx", pid, epoch, true), errNone)
	h.log.setFail(errTransport)
	h.settle()
	h.clock.Advance(h.cfg.MarkerRetryBackoff)
	if v := gaugeValues(t, reg); v[retry] != 1 {
		t.Fatalf("LogAppendRetryQueueSize %v", v[retry])
	}
	if _, err := h.c.RegisterMetrics(reg); err == nil {
		t.Fatal("registered twice")
	}
	unregister()
	if v := gaugeValues(t, reg); len(v) != 0 {
		t.Fatalf("after unregister: %v", v)
	}
}

func TestLoadTimeWindow(t *testing.T) {
	m := newCoordinatorMetrics()
	m.recordLoad(t0, 10*time.Millisecond)
	m.recordLoad(t0.Add(time.Second), 30*time.Millisecond)
	if mx, avg := m.loadTimes(t0.Add(2 * time.Second)); mx != 30 || avg != 20 {
		t.Fatalf("max %v avg %v", mx, avg)
	}
	if mx, _ := m.loadTimes(t0.Add(30*time.Second + 500*time.Millisecond)); mx != 30 {
		t.Fatalf("window: max %v", mx)
	}
	for range 2 * maxLoadSamples {
		m.recordLoad(t0, time.Millisecond)
	}
	if len(m.loads) > maxLoadSamples {
		t.Fatalf("%d samples kept", len(m.loads))
	}
}
