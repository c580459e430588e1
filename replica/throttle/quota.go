package throttle

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kafka's replication.quota.window.num and replication.quota.window.size.seconds
// defaults (ReplicationQuotaManagerConfig).
const (
	DefaultWindows = 11
	DefaultWindow  = time.Second
)

// Unlimited is Kafka's QUOTA_BYTES_PER_SECOND_DEFAULT (Long.MaxValue): no
// throttle.
const Unlimited = math.MaxInt64

// Quota is one side's replication quota: the leader's or the follower's.
type Quota struct {
	mu        sync.Mutex
	rate      *rate
	bytesRate int64 // bytes per second; Unlimited is none

	// throttled maps topic to its throttled partitions; all marks "*".
	// Readers on the fetch paths load it without the lock.
	throttled atomic.Pointer[map[string]throttledPartitions]
}

type throttledPartitions struct {
	all        bool
	partitions map[int32]bool
}

// New is a quota of Kafka's default windows with no limit.
func New() *Quota { return NewWindows(DefaultWindows, DefaultWindow) }

// NewWindows is a quota measured over windows windows of window each.
func NewWindows(windows int, window time.Duration) *Quota {
	q := &Quota{rate: newRate(windows, window), bytesRate: Unlimited}
	empty := map[string]throttledPartitions{}
	q.throttled.Store(&empty)
	return q
}

// SetRate puts a new bytes-per-second bound into force; Unlimited lifts
// it.
func (q *Quota) SetRate(bytesPerSecond int64) {
	q.mu.Lock()
	q.bytesRate = bytesPerSecond
	q.mu.Unlock()
}

// Rate is the bound in force.
func (q *Quota) Rate() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytesRate
}

// Record counts bytes moved for a throttled partition at now.
func (q *Quota) Record(bytes int, now time.Time) {
	q.mu.Lock()
	q.rate.record(float64(bytes), now)
	q.mu.Unlock()
}

// Exceeded reports whether the measured rate is over the bound at now
// (Sensor.checkQuotas with an upper bound).
func (q *Quota) Exceeded(now time.Time) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.bytesRate == Unlimited {
		return false
	}
	return q.rate.measure(now) > float64(q.bytesRate)
}

// Throttled reports whether a partition is throttled on this side.
func (q *Quota) Throttled(topic string, partition int32) bool {
	t, ok := (*q.throttled.Load())[topic]
	return ok && (t.all || t.partitions[partition])
}

// Throttles reports whether any partition is throttled, so that paths can
// skip the per-partition check when none is.
func (q *Quota) Throttles() bool { return len(*q.throttled.Load()) > 0 }

// ReplaceThrottledReplicas sets every topic's throttle at once from its
// leader.replication.throttled.replicas or
// follower.replication.throttled.replicas value for broker (Kafka's
// QuotaConfigHandler.parseThrottledPartitions): "*" throttles every
// partition, otherwise the "partition:broker" entries naming broker.
// Topics left out have none.
func (q *Quota) ReplaceThrottledReplicas(values map[string]string, broker int32) {
	next := make(map[string]throttledPartitions, len(values))
	for topic, v := range values {
		if tp := ParseThrottledReplicas(v, broker); tp.all || len(tp.partitions) > 0 {
			next[topic] = tp
		}
	}
	q.mu.Lock()
	q.throttled.Store(&next)
	q.mu.Unlock()
}

// ParseThrottledReplicas reads a throttled-replicas list for broker.
func ParseThrottledReplicas(value string, broker int32) throttledPartitions {
	value = strings.TrimSpace(value)
	if value == "*" {
		return throttledPartitions{all: true}
	}
	out := throttledPartitions{partitions: map[int32]bool{}}
	for _, e := range strings.Split(value, ",") {
		p, b, ok := strings.Cut(strings.TrimSpace(e), ":")
		if !ok {
			continue
		}
		pn, err1 := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		bn, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 32)
		if err1 == nil && err2 == nil && int32(bn) == broker {
			out.partitions[int32(pn)] = true
		}
	}
	return out
}
