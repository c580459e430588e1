package server

// Client quotas on a consumer's Fetch, as Kafka 3.9's
// KafkaApis.handleFetchRequest applies them: max_bytes is first capped
// at what the fetch byte-rate quota allows in one window; when the fetch
// is answered, the response's size and the handler's time are recorded
// against the fetch and request quotas, and a client over either gets an
// empty answer carrying the throttle time at once (the bytes recorded are
// taken back: nothing was sent), its connection muted for that long.
// Followers' fetches are not throttled here: replication quotas are
// separate (server/GAPS.md).

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

// fetchQuota is a consumer fetch's quota check, set on the plan when a
// quota is in force.
type fetchQuota struct {
	b            *Broker
	user, client string
	started      time.Time
	// firstPhase is the handler's time before the fetch went to wait in
	// the purgatory: waiting is not handler time.
	firstPhase time.Duration
}

// applyFetchQuotas caps the plan's max bytes by the fetch quota and
// arms the check made when the fetch is answered. Nothing happens while
// no fetch or request quota was ever set.
func (b *Broker) applyFetchQuotas(req *protocol.Request, plan *fetchPlan, started time.Time) {
	if (!b.quotas.Fetch.Enabled() && !b.quotas.Request.Enabled()) || plan.replicaID >= 0 || quotaExempt(req) {
		return
	}
	user, client := quotaClient(req)
	// getMaxValueInQuotaWindow: more than this at once is throttled
	// whatever came before.
	if w := b.quotas.Fetch.MaxValueInQuotaWindow(user, client); w < float64(math.MaxInt32) {
		plan.maxBytes = min(plan.maxBytes, int(w))
		plan.minBytes = min(plan.minBytes, plan.maxBytes)
	}
	plan.quota = &fetchQuota{b: b, user: user, client: client, started: started}
}

// waiting marks the end of the handler's first phase.
func (q *fetchQuota) waiting() { q.firstPhase = time.Since(q.started) }

// check records the answer's size and the handler's time and returns
// the throttle time, taking the bytes back when throttled.
func (q *fetchQuota) check(size int) time.Duration {
	now := time.Now()
	busy := q.firstPhase
	if busy == 0 {
		busy = now.Sub(q.started)
	}
	quotas := q.b.quotas
	requestThrottle := quotas.Request.Record(q.user, q.client, requestPercentage(busy), now)
	bytesThrottle := quotas.Fetch.Record(q.user, q.client, float64(size), now)
	d := max(requestThrottle, bytesThrottle)
	if d <= 0 {
		return 0
	}
	// The answer will be empty: unrecordQuotaSensor.
	quotas.Fetch.RecordNoThrottle(q.user, q.client, -float64(size), now)
	if bytesThrottle > requestThrottle {
		quotas.Fetch.Throttled(q.user, q.client, d, now)
	} else {
		quotas.Request.Throttled(q.user, q.client, d, now)
	}
	return d
}

// responseSize estimates the encoded size of the answer the last read
// makes (Kafka's FetchContext.getResponseSize): the record bytes and the
// fixed fields of each partition and topic.
func (f *fetchPlan) responseSize() int {
	const header, perTopic, perPartition = 16, 24, 48
	size := header
	topic := ""
	for _, fp := range f.parts {
		if fp.sp.key.topic != topic || size == header {
			size += perTopic + len(fp.sp.key.topic)
			topic = fp.sp.key.topic
		}
		size += perPartition
		if fp.data != nil {
			size += fp.data.Len()
		}
	}
	return size
}

// throttledAnswer is FetchContext.getThrottledResponse: no partitions,
// the throttle time, and the session only for an incremental fetch (a
// full fetch's new session is not kept, as Kafka creates it only when it
// answers with data).
func (f *fetchPlan) throttledAnswer(d time.Duration) protocol.Response {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(f.version)
	resp.ThrottleMillis = int32(min(d.Milliseconds(), math.MaxInt32))
	if f.session != nil {
		if f.full {
			f.quota.b.data.sessions.remove(f.session.id)
		} else {
			resp.SessionID = f.session.id
		}
	}
	return protocol.Response{Msg: resp, Throttle: d}
}
