package server

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/purgatory"
	"github.com/kbroker/kbroker/replica"
)

// delayedOps is the broker's one purgatory: acks=-1 produces, offset
// commits and long-polling fetches wait in it on their partitions, and
// every partition (Options.Delayed) has it check them after an append, a
// high-watermark move, or a leadership or ISR change.
type delayedOps = purgatory.Purgatory[*replica.Partition]

func newDelayedOps(clock purgatory.Clock) *delayedOps {
	return purgatory.New[*replica.Partition](clock)
}

// delayedOperations is what partitions hosted here report their changes
// to; a nil interface (not a nil pointer) for a broker built without one
// (tests), whose partitions then have nobody to wake.
func (b *Broker) delayedOperations() replica.DelayedOperations {
	if b.delayed == nil {
		return nil
	}
	return b.delayed
}

// delayedProduce is an acks=-1 produce (or an offset commit) waiting for
// its partitions' high watermarks: the verdict is replica.DelayedProduce,
// fed each partition's state as the partition has it at the check.
type delayedProduce struct {
	verdict replica.DelayedProduce
	// parts[i] is verdict.Partitions[i]'s partition; it is also the
	// operation's watch keys.
	parts []*replica.Partition
	// A produce to one partition keeps its verdict input and key here
	// rather than in two more allocations.
	onePart [1]replica.DelayedProducePartition
	oneKey  [1]*replica.Partition
}

// newDelayedProduce makes room for n partitions, which set fills in.
func newDelayedProduce(n int, deadline time.Time) *delayedProduce {
	d := &delayedProduce{verdict: replica.DelayedProduce{Deadline: deadline}}
	if n == 1 {
		d.verdict.Partitions, d.parts = d.onePart[:], d.oneKey[:]
	} else {
		d.verdict.Partitions = make([]replica.DelayedProducePartition, n)
		d.parts = make([]*replica.Partition, n)
	}
	return d
}

// set makes partition i wait for p's HW to reach requiredOffset.
func (d *delayedProduce) set(i int, p *replica.Partition, requiredOffset int64) {
	d.parts[i] = p
	d.verdict.Partitions[i] = replica.DelayedProducePartition{
		TopicPartition: replica.TopicPartition{Topic: p.Topic, Partition: p.Index},
		RequiredOffset: requiredOffset,
	}
}

func (d *delayedProduce) TryComplete(now time.Time) bool {
	return d.verdict.TryComplete(d.state, now)
}

func (d *delayedProduce) state(i int) replica.ProduceWaitState { return d.parts[i].ProduceWaitState() }

// err is partition i's answer once the operation completed: a partition
// still waiting then (the timeout, or the connection closing) is
// REQUEST_TIMED_OUT.
func (d *delayedProduce) err(i int) error {
	o := d.verdict.Partitions[i].Outcome
	if !o.Done {
		return kerr.RequestTimedOut
	}
	return o.Err
}

// delayedFetch is a fetch waiting for fetch.min.bytes: the verdict is
// replica.DelayedFetch, fed from each partition's offsets; the records are
// read again only when it completed (fetchPlan.read), as Kafka's
// DelayedFetch.onComplete does.
type delayedFetch struct {
	plan    *fetchPlan
	verdict replica.DelayedFetch
	keys    []*replica.Partition
	// A fetch of one partition (most consumers' fetches) keeps its
	// verdict input and key here rather than in two more allocations.
	onePart [1]replica.FetchWaitPartition
	oneKey  [1]*replica.Partition
	// counted[i] is the last byte count read for partition i and the end
	// offset it was read to, so that a check finding the same end (a
	// follower's fetch checked after another follower moved the HW) reads
	// nothing. Made only for a min_bytes that needs counting.
	counted []countedBytes
}

type countedBytes struct {
	end, bytes int64
}

func newDelayedFetch(f *fetchPlan, deadline time.Time) *delayedFetch {
	d := &delayedFetch{plan: f, verdict: replica.DelayedFetch{MinBytes: int64(f.minBytes), Deadline: deadline}}
	if len(f.parts) == 1 {
		d.verdict.Partitions, d.keys = d.onePart[:], d.oneKey[:]
	} else {
		d.verdict.Partitions = make([]replica.FetchWaitPartition, len(f.parts))
		d.keys = make([]*replica.Partition, len(f.parts))
	}
	for i, fp := range f.parts {
		d.keys[i] = fp.p
		d.verdict.Partitions[i] = replica.FetchWaitPartition{
			TopicPartition:   replica.TopicPartition{Topic: fp.p.Topic, Partition: fp.p.Index},
			FetchOffset:      fp.fetchOffset,
			MaxBytes:         int64(fp.partitionMaxBytes),
			LastFetchedEpoch: fp.lastFetchedEpoch,
		}
	}
	return d
}

func (d *delayedFetch) TryComplete(now time.Time) bool {
	return d.verdict.TryComplete(d.state, now) != replica.FetchWaiting
}

// state is partition i's state for the verdict. A follower may read to
// the log end, a consumer to the high watermark, a read_committed one to
// the last stable offset (fetchPlan.readTo). The diverging-epoch check
// (the verdict's Cache) is left out: the read when the fetch arrived made
// it, a diverging fetch is answered at once, and the leader's epochs only
// change while it waits with a leadership change, which ends the wait.
func (d *delayedFetch) state(i int) replica.FetchWaitState {
	fp := d.plan.parts[i]
	leading, end, leo := fp.p.FetchWaitOffsets(fp.currentLeaderEpoch, d.plan.readTo(), d.plan.anyReplica)
	if !leading {
		return replica.FetchWaitState{Gone: true}
	}
	st := replica.FetchWaitState{EndOffset: end, LogEndOffset: leo}
	if fp.fetchOffset < end {
		n, err := d.bytesAvailable(i, fp, end)
		if err != nil {
			return replica.FetchWaitState{Gone: true}
		}
		st.BytesAvailable = n
	}
	return st
}

// bytesAvailable is the number of bytes readable between the fetch offset
// and end, or a lower bound of it when that is enough for the verdict:
// the log keeps no byte positions by offset, so counting needs a read
// (index lookups and header reads), which a fetch that asks for at most a
// batch header's worth — every consumer and follower with the default
// fetch.min.bytes of 1 — does not need, since a readable offset means at
// least one whole batch.
func (d *delayedFetch) bytesAvailable(i int, fp *fetchPart, end int64) (int64, error) {
	if d.verdict.MinBytes <= logstore.BatchHeaderSize {
		return logstore.BatchHeaderSize, nil
	}
	if d.counted == nil {
		d.counted = make([]countedBytes, len(d.plan.parts))
	}
	c := &d.counted[i]
	if c.end == end {
		return c.bytes, nil
	}
	rr, err := fp.p.Log().Read(fp.fetchOffset, end, max(int(fp.partitionMaxBytes), 0), true)
	if err != nil {
		return 0, err
	}
	c.end, c.bytes = end, int64(rr.Len())
	return c.bytes, nil
}
