package throttle

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

// SimpleRate measures over the time since the oldest window began, at
// least one window.
func TestRateOverElapsedTime(t *testing.T) {
	r := newRate(11, time.Second)
	r.record(1000, t0)
	if got := r.measure(t0.Add(100 * time.Millisecond)); got != 1000 {
		t.Fatalf("rate 100 ms after start: %v, want 1000 bytes over one window", got)
	}
	if got := r.measure(t0.Add(4 * time.Second)); got != 250 {
		t.Fatalf("rate after 4 s: %v, want 250", got)
	}
	// After the windows fill, only the last 11 (and the overlapping one)
	// count.
	for i := 1; i <= 20; i++ {
		r.record(1000, t0.Add(time.Duration(i)*time.Second))
	}
	got := r.measure(t0.Add(20*time.Second + 500*time.Millisecond))
	// 12 slots hold the records of 9 s to 20 s; the one of 9 s is 11.5 s
	// old and purged, leaving 10 s to 20 s, measured over 10.5 s.
	if want := 11000 / 10.5; got < want-1 || got > want+1 {
		t.Fatalf("steady rate %v, want about %v", got, want)
	}
}

// Samples whose last event is older than all windows together are
// forgotten.
func TestRateForgetsOldSamples(t *testing.T) {
	r := newRate(11, time.Second)
	r.record(1e9, t0)
	if got := r.measure(t0.Add(12 * time.Second)); got != 0 {
		t.Fatalf("rate 12 s after the only record: %v", got)
	}
}

func TestQuotaExceeded(t *testing.T) {
	q := New()
	if q.Exceeded(t0) {
		t.Fatal("an unlimited quota is exceeded")
	}
	q.Record(1e12, t0)
	if q.Exceeded(t0) {
		t.Fatal("an unlimited quota is exceeded after a huge record")
	}
	q.SetRate(1000)
	if !q.Exceeded(t0.Add(time.Second)) {
		t.Fatal("1e12 bytes in 10 s does not exceed 1000 B/s")
	}
	q2 := New()
	q2.SetRate(1000)
	q2.Record(2000, t0)
	if q2.Exceeded(t0.Add(2 * time.Second)) {
		t.Fatal("2000 bytes over 2 s is exactly the bound, not over it")
	}
	q2.Record(1, t0.Add(2*time.Second))
	if !q2.Exceeded(t0.Add(2 * time.Second)) {
		t.Fatal("one byte more is over")
	}
}

// The throttled-replicas lists, as QuotaConfigHandler reads them for
// one broker.
func TestThrottledReplicas(t *testing.T) {
	q := New()
	setThrottled(q, "a", "0:1,1:2,2:1", 1)
	setThrottled(q, "b", "*", 1)
	setThrottled(q, "c", "0:2", 1)
	for _, c := range []struct {
		topic string
		p     int32
		want  bool
	}{{"a", 0, true}, {"a", 1, false}, {"a", 2, true}, {"b", 7, true}, {"c", 0, false}, {"d", 0, false}} {
		if got := q.Throttled(c.topic, c.p); got != c.want {
			t.Errorf("%s-%d throttled %v, want %v", c.topic, c.p, got, c.want)
		}
	}
	if !q.Throttles() {
		t.Fatal("Throttles false with throttled partitions")
	}
	setThrottled(q, "a", "", 1)
	if q.Throttled("a", 0) {
		t.Fatal("an empty list still throttles")
	}
	q.ReplaceThrottledReplicas(map[string]string{"e": "3:1"}, 1)
	if q.Throttled("b", 0) || !q.Throttled("e", 3) {
		t.Fatal("ReplaceThrottledReplicas kept old topics or lost the new one")
	}
	q.ReplaceThrottledReplicas(nil, 1)
	if q.Throttles() {
		t.Fatal("throttles after replacing with none")
	}
}

// setThrottled changes one topic's throttled-replicas value, keeping the
// others'.
func setThrottled(q *Quota, topic, value string, broker int32) {
	values := map[string]string{}
	for t, tp := range *q.throttled.Load() {
		values[t] = encodeThrottled(tp, broker)
	}
	values[topic] = value
	q.ReplaceThrottledReplicas(values, broker)
}

func encodeThrottled(tp throttledPartitions, broker int32) string {
	if tp.all {
		return "*"
	}
	var out []string
	for p := range tp.partitions {
		out = append(out, fmt.Sprintf("%d:%d", p, broker))
	}
	return strings.Join(out, ",")
}
