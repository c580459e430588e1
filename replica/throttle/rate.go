package throttle

import (
	"time"

	"github.com/kbroker/kbroker/quota"
)

// rate is Kafka's SimpleRate over samples windows of window each, the
// same sampled sum the client quotas measure with (quota.SimpleRate).
type rate struct{ r *quota.SimpleRate }

func newRate(samples int, window time.Duration) *rate {
	return &rate{quota.NewSimpleRate(quota.Config{Samples: samples, Window: window})}
}

func (r *rate) record(v float64, now time.Time) { r.r.Record(v, now) }

// measure is the rate per second at now.
func (r *rate) measure(now time.Time) float64 { return r.r.Measure(now) }
