package cluster

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// slowProduceRequests records the chaos producer's produce requests that
// took a second or more, from the moment the client made them to the end
// of their answer (or of the error that ended them). An idempotent producer
// sends a partition nothing else while such a request is out, so these are
// what separate its refused seconds from the fresh writers': the report
// names, per fault, the longest one and the broker it waited on.
type slowProduceRequests struct {
	mu   sync.Mutex
	reqs []slowProduceRequest
}

type slowProduceRequest struct {
	start  time.Time
	took   time.Duration
	broker int32
	err    string // "" when answered
}

// slowRequestMin is the shortest request worth recording: fresh writes give
// up after two, and a healthy acks=all produce takes milliseconds.
const slowRequestMin = time.Second

var _ kgo.HookBrokerE2E = (*slowProduceRequests)(nil)

func (s *slowProduceRequests) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	const produceKey = 0
	took := e2e.WriteWait + e2e.DurationE2E()
	if key != produceKey || took < slowRequestMin {
		return
	}
	r := slowProduceRequest{start: time.Now().Add(-took), took: took, broker: meta.NodeID}
	if err := e2e.Err(); err != nil {
		r.err = err.Error()
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// longestBetween describes the longest recorded request made in [from,
// until): "b2 9.3s", with the error that ended it if any, or "-".
func (s *slowProduceRequests) longestBetween(from, until time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var longest *slowProduceRequest
	for i := range s.reqs {
		r := &s.reqs[i]
		if !r.start.Before(from) && r.start.Before(until) && (longest == nil || r.took > longest.took) {
			longest = r
		}
	}
	if longest == nil {
		return "-"
	}
	desc := fmt.Sprintf("b%d %v", longest.broker, longest.took.Round(100*time.Millisecond))
	if longest.err != "" {
		// The innermost cause ("i/o timeout", "EOF") is the part that
		// tells the faults apart; the rest repeats addresses.
		cause := longest.err[strings.LastIndex(longest.err, ": ")+1:]
		desc += ", " + strings.TrimSpace(cause)
	}
	return desc
}
