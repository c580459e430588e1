package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producer keeps producing acks=all records until stopped, counting
// acknowledgements and final errors.
type producer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	acked  atomic.Int64

	mu   sync.Mutex
	errs map[string]errCount
	// offsets of acknowledged records by value
	offsets map[string]ackedAt
	// lastAck and maxGap measure the longest time a partition went
	// without an acknowledgement: how long it was unavailable to
	// producers.
	lastAck      map[int32]time.Time
	maxGap       time.Duration
	gapEnd       time.Time
	gapPartition int32
}

type ackedAt struct {
	Partition int32
	Offset    int64
}

func startProducer(t *testing.T, seeds []string, topic string, opts ...kgo.Opt) *producer {
	t.Helper()
	opts = append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(30 * time.Second),
		kgo.ProducerLinger(5 * time.Millisecond)}, opts...)
	// The client's own warnings say why records waited (NOT_LEADER, a
	// sequence error, a dead connection); shown when the test fails.
	clientLog := &tailBuffer{max: 64 << 10}
	opts = append(opts, kgo.WithLogger(kgo.BasicLogger(clientLog, kgo.LogLevelWarn, func() string {
		return time.Now().UTC().Format("15:04:05.000 ")
	})))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("producer client log, tail:\n%s", clientLog.String())
		}
	})
	p := &producer{
		cl:      newClient(t, seeds, opts...),
		done:    make(chan struct{}),
		errs:    map[string]errCount{},
		offsets: map[string]ackedAt{},
		lastAck: map[int32]time.Time{},
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.done)
		// At most 500 records in flight, so a stop does not wait on an
		// unbounded backlog.
		sem := make(chan struct{}, 500)
		for i := 0; ctx.Err() == nil; i++ {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				continue
			}
			r := &kgo.Record{Value: fmt.Appendf(nil, "r-%d", i)}
			p.cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
				<-sem
				p.mu.Lock()
				defer p.mu.Unlock()
				if err != nil {
					e := p.errs[err.Error()]
					e.n++
					e.retriable = isRetriable(err)
					p.errs[err.Error()] = e
					return
				}
				p.acked.Add(1)
				p.offsets[string(r.Value)] = ackedAt{r.Partition, r.Offset}
				now := time.Now()
				if last, ok := p.lastAck[r.Partition]; ok && now.Sub(last) > p.maxGap {
					p.maxGap, p.gapEnd, p.gapPartition = now.Sub(last), now, r.Partition
				}
				p.lastAck[r.Partition] = now
			})
			time.Sleep(time.Millisecond)
		}
	}()
	return p
}

// errCount counts one producer error text.
type errCount struct {
	n         int
	retriable bool
}

// isRetriable: a record that ran out of delivery time while retrying a
// retriable error carries that error wrapped.
func isRetriable(err error) bool {
	var ke *kerr.Error
	return kerr.IsRetriable(err) || (errors.As(err, &ke) && ke.Retriable)
}

// stop ends production, waits (bounded) for every in-flight record and
// returns the count of acknowledged records and the errors seen.
func (p *producer) stop(t *testing.T) (int64, map[string]errCount) {
	t.Helper()
	p.cancel()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("producer loop did not stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := p.cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked.Load(), maps.Clone(p.errs)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// stopProducer stops p and logs its errors; records that failed were not
// acknowledged, so only the acknowledged ones are checked afterwards.
func stopProducer(t *testing.T, p *producer) {
	t.Helper()
	acked, errs := p.stop(t)
	for text, e := range errs {
		t.Logf("producer error (%d times, retriable %v): %s", e.n, e.retriable, text)
	}
	p.mu.Lock()
	maxGap, gapEnd, gapPartition := p.maxGap, p.gapEnd, p.gapPartition
	p.mu.Unlock()
	t.Logf("%d records acknowledged; longest time without an acknowledgement %v (partition %d, until %s)",
		acked, maxGap.Round(time.Millisecond), gapPartition, gapEnd.UTC().Format("15:04:05.000"))
	if acked == 0 {
		t.Fatal("no record acknowledged")
	}
	// A broker failure costs about one session timeout before the new
	// leaders are elected; a producer blocked much longer than that means
	// a partition stayed unavailable.
	if limit := sessionTimeout + 10*time.Second; maxGap > limit {
		t.Errorf("partition %d got no acknowledgement for %v (until %s), more than %v",
			gapPartition, maxGap.Round(time.Millisecond), gapEnd.UTC().Format("15:04:05.000"), limit)
	}
}
