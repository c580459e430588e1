package quota

import "time"

// sample is one window of a SampledStat (SampledStat.Sample).
type sample struct {
	value     float64
	events    int64
	startMs   int64
	lastEvent int64
}

func (s *sample) reset(now int64) {
	*s = sample{startMs: now, lastEvent: now}
}

// sampled is Kafka's SampledStat with samples+1 windows (the extra one is
// the "overlapping sample"), summing (WindowedSum) or averaging (Avg).
type sampled struct {
	samples []sample
	current int
}

func (st *sampled) currentSample(now int64) *sample {
	if len(st.samples) == 0 {
		st.samples = append(st.samples, sample{startMs: now, lastEvent: now})
	}
	return &st.samples[st.current]
}

func (st *sampled) record(c Config, value float64, now int64) {
	s := st.currentSample(now)
	if now-s.startMs >= c.windowMs() {
		s = st.advance(c, now)
	}
	s.value += value
	s.events++
	s.lastEvent = now
}

func (st *sampled) advance(c Config, now int64) *sample {
	maxSamples := c.Samples + 1
	st.current = (st.current + 1) % maxSamples
	if st.current >= len(st.samples) {
		st.samples = append(st.samples, sample{startMs: now, lastEvent: now})
		return &st.samples[len(st.samples)-1]
	}
	s := &st.samples[st.current]
	s.reset(now)
	return s
}

// purge resets samples with no event within the monitored window
// (samples overlapping it are kept even if they started before it).
func (st *sampled) purge(c Config, now int64) {
	expire := int64(c.Samples) * c.windowMs()
	for i := range st.samples {
		if now-st.samples[i].lastEvent >= expire {
			st.samples[i].reset(now)
		}
	}
}

func (st *sampled) oldest(now int64) *sample {
	if len(st.samples) == 0 {
		st.samples = append(st.samples, sample{startMs: now, lastEvent: now})
	}
	o := &st.samples[0]
	for i := 1; i < len(st.samples); i++ {
		if st.samples[i].startMs < o.startMs {
			o = &st.samples[i]
		}
	}
	return o
}

// sum is WindowedSum.combine after a purge.
func (st *sampled) sum(c Config, now int64) float64 {
	st.purge(c, now)
	var t float64
	for _, s := range st.samples {
		t += s.value
	}
	return t
}

// avg is Avg.combine after a purge: NaN without events.
func (st *sampled) avg(c Config, now int64) (float64, bool) {
	st.purge(c, now)
	var t float64
	var n int64
	for _, s := range st.samples {
		t += s.value
		n += s.events
	}
	if n == 0 {
		return 0, false
	}
	return t / float64(n), true
}

// rate is Kafka's Rate (seconds) over a WindowedSum.
type rate struct{ st sampled }

func (r *rate) record(c Config, value float64, now int64) { r.st.record(c, value, now) }

// measure is the rate per second at now.
func (r *rate) measure(c Config, now int64) float64 {
	v := r.st.sum(c, now)
	return v / (float64(r.windowSize(c, now)) / 1000)
}

// windowSize is Rate.windowSize: the time since the oldest retained
// sample, at least samples-1 full windows, at least 1 ms.
func (r *rate) windowSize(c Config, now int64) int64 {
	r.st.purge(c, now)
	elapsed := now - r.st.oldest(now).startMs
	full := elapsed / c.windowMs()
	minFull := int64(c.Samples - 1)
	if full < minFull {
		elapsed += (minFull - full) * c.windowMs()
	}
	return max(elapsed, 1)
}

// SimpleRate is Kafka's SimpleRate over the same WindowedSum, as
// ReplicationQuotaManager measures replication: the rate over the time
// since the oldest retained window began, at least one window (so a first
// burst is measured over a whole window, not the milliseconds since it
// began). Not safe for concurrent use.
type SimpleRate struct {
	cfg Config
	st  sampled
}

// NewSimpleRate measures over cfg.Samples windows of cfg.Window.
func NewSimpleRate(cfg Config) *SimpleRate { return &SimpleRate{cfg: cfg} }

// Record adds v at now.
func (r *SimpleRate) Record(v float64, now time.Time) { r.st.record(r.cfg, v, now.UnixMilli()) }

// Measure is the rate per second at now.
func (r *SimpleRate) Measure(now time.Time) float64 {
	ms := now.UnixMilli()
	total := r.st.sum(r.cfg, ms)
	elapsed := max(ms-r.st.oldest(ms).startMs, r.cfg.windowMs())
	return total / (float64(elapsed) / 1000)
}
