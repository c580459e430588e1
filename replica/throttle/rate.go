package throttle

import "time"

// rate is Kafka's SimpleRate over a SampledStat of sums, as
// ReplicationQuotaManager measures: samples windows of window each (plus
// one overlapping slot), a window forgotten once its last event is
// samples windows old, and the rate taken over the time since the oldest
// window started, at least one window (so a first burst is measured over
// a whole window, not over the few milliseconds since it began).
type rate struct {
	window  time.Duration
	samples []sample
	current int
	max     int
}

type sample struct {
	start, lastEvent time.Time
	total            float64
}

func newRate(samples int, window time.Duration) *rate {
	return &rate{window: window, max: samples}
}

// record adds v at now (SampledStat.record): a complete current window is
// replaced by the next, reusing the oldest slot once all exist.
func (r *rate) record(v float64, now time.Time) {
	s := r.currentSample(now)
	if now.Sub(s.start) >= r.window {
		r.current = (r.current + 1) % (r.max + 1)
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{start: now, lastEvent: now})
		} else {
			r.samples[r.current] = sample{start: now, lastEvent: now}
		}
		s = &r.samples[r.current]
	}
	s.total += v
	s.lastEvent = now
}

func (r *rate) currentSample(now time.Time) *sample {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now, lastEvent: now})
	}
	return &r.samples[r.current]
}

// measure is the rate per second at now (Rate.measure with SimpleRate's
// window size).
func (r *rate) measure(now time.Time) float64 {
	r.purge(now)
	var total float64
	for _, s := range r.samples {
		total += s.total
	}
	oldest := r.currentSample(now).start
	for _, s := range r.samples {
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := max(now.Sub(oldest), r.window)
	return total / elapsed.Seconds()
}

// purge resets the samples whose last event is older than all the windows
// together (SampledStat.purgeObsoleteSamples).
func (r *rate) purge(now time.Time) {
	expire := time.Duration(r.max) * r.window
	for i := range r.samples {
		if now.Sub(r.samples[i].lastEvent) >= expire {
			r.samples[i] = sample{start: now, lastEvent: now}
		}
	}
}
