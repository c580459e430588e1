package protocol

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBucketsCoverEveryValueOnce(t *testing.T) {
	prev := -1
	for _, us := range []uint64{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 100, 1000, 12345, 1 << 39, 1<<40 - 1} {
		i := bucketOf(us)
		lo, w := bucketBounds(i)
		if float64(us) < lo || float64(us) >= lo+w {
			t.Fatalf("%d µs in bucket %d [%v, %v)", us, i, lo, lo+w)
		}
		if i < prev {
			t.Fatalf("bucket of %d µs (%d) below the previous value's (%d)", us, i, prev)
		}
		prev = i
	}
	if got := bucketOf(1 << 50); got != histBuckets-1 {
		t.Fatalf("huge value in bucket %d, want the last", got)
	}
	// Buckets are contiguous.
	for i := 1; i < histBuckets; i++ {
		plo, pw := bucketBounds(i - 1)
		lo, _ := bucketBounds(i)
		if plo+pw != lo {
			t.Fatalf("gap between buckets %d and %d", i-1, i)
		}
	}
}

func TestQuantileEstimates(t *testing.T) {
	var h histogram
	if q := quantile(h.snapshot(0).counts, 0.5); !math.IsNaN(q) {
		t.Fatalf("quantile of nothing = %v, want NaN", q)
	}
	// 1..1000 ms, one each.
	for ms := int64(1); ms <= 1000; ms++ {
		h.record(ms * 1e6)
	}
	counts := h.snapshot(0).counts
	for _, c := range []struct{ q, want float64 }{{0.5, 500}, {0.99, 990}, {0.999, 999}} {
		got := quantile(counts, c.q)
		if math.Abs(got-c.want)/c.want > 0.13 {
			t.Fatalf("q%v = %v ms, want about %v", c.q, got, c.want)
		}
	}
	var th histogram
	th.recordMs(250)
	if got := quantile(th.snapshot(0).counts, 0.5); got < 200 || got > 260 {
		t.Fatalf("throttle median %v, want about 250", got)
	}
}

// The quantiles follow recent requests: after a window of slow requests
// and two windows of fast ones, the slow ones are out.
func TestHistogramWindowForgetsOldValues(t *testing.T) {
	var h histogram
	const w = int64(60e9)
	observe := func(now int64) (uint64, float64) {
		total, recent := h.win.observe(h.snapshot(now), w)
		return total, quantile(recent, 0.99)
	}
	for range 100 {
		h.record(500e6) // 500 ms
	}
	if total, q := observe(1e9); total != 100 || q < 400 {
		t.Fatalf("first scrape: total %d, q99 %v", total, q)
	}
	for range 100 {
		h.record(2e6)
	}
	observe(w + 2e9) // rotates: the base is still the start
	for range 100 {
		h.record(2e6)
	}
	total, q := observe(2*w + 3e9) // rotates: the base is the scrape at w+2s
	if total != 300 || q > 3 {
		t.Fatalf("after two windows: total %d, q99 %v ms, want the slow requests forgotten", total, q)
	}
	// Scraping often does not shrink the window below one window.
	total, q = observe(2*w + 4e9)
	if total != 300 || math.IsNaN(q) {
		t.Fatalf("scrape right after: total %d, q99 %v", total, q)
	}
}

func TestIdleMeter(t *testing.T) {
	var m idleMeter
	const w = int64(60e9)
	// Two procs, one busy half the time over 10 s: 75% idle.
	m.add(5e9)
	frac, idle := m.observe(0, 10e9, 2, w)
	if math.Abs(frac-0.75) > 1e-9 || math.Abs(idle-7.5e9) > 1 {
		t.Fatalf("idle %v, idle ns %v; want 0.75, 7.5e9", frac, idle)
	}
	// A fully busy minute later, the window (its base the start) shows it.
	m.add(2 * 70e9)
	m.observe(0, 70e9, 2, w)
	frac, _ = m.observe(0, 80e9, 2, w)
	if frac > 0.1 {
		t.Fatalf("idle %v after busy time, want near 0", frac)
	}
	// More busy time than capacity (handlers blocked) is 0, not negative,
	// and the idle count never goes back.
	m.add(1000e9)
	frac, idle2 := m.observe(0, 200e9, 2, w)
	if frac != 0 || idle2 < idle {
		t.Fatalf("overbooked: idle %v, count %v (was %v)", frac, idle2, idle)
	}
	if idleFraction(0, 0, 1) != 1 {
		t.Fatal("no time passed should be idle")
	}
}

func TestRequestNamesAreKafkas(t *testing.T) {
	for k, want := range map[int]string{0: "Produce", 1: "Fetch", 4: "LeaderAndIsr", 17: "SaslHandshake", 22: "InitProducerId",
		29: "DescribeAcls", 36: "SaslAuthenticate", 50: "DescribeUserScramCredentials", 67: "AllocateProducerIds",
		nameFetchConsumer: "FetchConsumer", nameFetchFollower: "FetchFollower"} {
		if requestNames[k] != want {
			t.Errorf("name of %d = %q, want %q", k, requestNames[k], want)
		}
	}
}

func TestRequestMetricsRecord(t *testing.T) {
	m := newRequestMetrics()
	fetch := kmsg.NewPtrFetchRequest()
	fetch.ReplicaID = -1
	fetch.ReplicaState.ID = 2 // v15+: the follower's id is here
	req := &Request{Key: 1, Version: 15, Body: fetch}
	// 1 ms queued, 2 ms handling, 100 ms waiting, 3 ms behind others, 4 ms sending.
	req.times = reqTimes{received: 0, decoded: 1e5, dequeued: 1e6, localDone: 3e6, ready: 103e6, sendStart: 106e6}
	resp := Response{Msg: &kmsg.FetchResponse{ThrottleMillis: 40}}
	m.record(req, &resp, 110e6)
	m.handled(2e6)
	produce := &Request{Key: 0, Version: 9, Body: kmsg.NewPtrProduceRequest()}
	produce.times = reqTimes{received: 0, decoded: 0, dequeued: 0, localDone: 5e6}
	m.record(produce, &Response{None: true, ThrottleMs: 7}, 5e6)
	// A bare SASL token has no body: not a request of any API.
	m.record(&Request{}, &Response{}, 1)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	got, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	find := func(name string, labels map[string]string) float64 {
		for _, mf := range got {
			if mf.GetName() != name {
				continue
			}
		next:
			for _, mm := range mf.Metric {
				for k, v := range labels {
					found := false
					for _, lp := range mm.Label {
						if lp.GetName() == k && lp.GetValue() == v {
							found = true
						}
					}
					if !found {
						continue next
					}
				}
				if mm.Gauge != nil {
					return mm.Gauge.GetValue()
				}
				return mm.Counter.GetValue()
			}
		}
		t.Fatalf("no %s%v", name, labels)
		return 0
	}
	for _, c := range []struct {
		name    string
		request string
		want    float64
	}{
		{"kafka_network_requestmetrics_requestqueuetimems", "Fetch", 1},
		{"kafka_network_requestmetrics_localtimems", "FetchFollower", 2},
		{"kafka_network_requestmetrics_remotetimems", "Fetch", 100},
		{"kafka_network_requestmetrics_responsequeuetimems", "FetchFollower", 3},
		{"kafka_network_requestmetrics_responsesendtimems", "Fetch", 4},
		{"kafka_network_requestmetrics_totaltimems", "Fetch", 110},
		{"kafka_network_requestmetrics_throttletimems", "Fetch", 40},
		{"kafka_network_requestmetrics_throttletimems", "Produce", 7},
		{"kafka_network_requestmetrics_localtimems", "Produce", 5},
	} {
		v := find(c.name, map[string]string{"request": c.request, "quantile": "0.50"})
		if math.Abs(v-c.want)/c.want > 0.13 {
			t.Errorf("%s{request=%s} median %v, want about %v", c.name, c.request, v, c.want)
		}
	}
	if v := find("kafka_network_requestmetrics_requests_total", map[string]string{"request": "FetchFollower", "version": "15"}); v != 1 {
		t.Errorf("FetchFollower requests %v", v)
	}
	if v := find("kafka_network_requestmetrics_totaltimems_count", map[string]string{"request": "Produce"}); v != 1 {
		t.Errorf("Produce count %v", v)
	}
	if n := testutil.CollectAndCount(m, "kafka_network_requestmetrics_requests_total"); n != 3 {
		t.Errorf("%d request series, want Fetch, FetchFollower and Produce (no FetchConsumer)", n)
	}
	idle := find("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", nil)
	if idle < 0 || idle > 1 {
		t.Errorf("handler idle %v", idle)
	}
}

// The cost the request metrics add to every request, from both cores at
// once (the counters are shared).
func BenchmarkRequestMetricsRecord(b *testing.B) {
	m := newRequestMetrics()
	b.RunParallel(func(pb *testing.PB) {
		body := kmsg.NewPtrProduceRequest()
		resp := Response{Msg: kmsg.NewPtrProduceResponse()}
		for pb.Next() {
			req := &Request{Key: 0, Version: 9, Body: body}
			req.times.received = nanotime()
			req.times.decoded = nanotime()
			req.times.dequeued = nanotime()
			req.times.localDone = nanotime()
			m.handled(req.times.localDone - req.times.dequeued)
			req.times.sendStart = nanotime()
			m.record(req, &resp, nanotime())
		}
	})
}
