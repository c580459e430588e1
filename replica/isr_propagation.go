package replica

import (
	"cmp"
	"slices"
	"time"
)

// Kafka's hard-coded ISR change propagation timing
// (ZkAlterPartitionManager.DefaultIsrPropagationConfig).
const (
	IsrChangePropagationInterval = 2500 * time.Millisecond
	IsrChangePropagationBlackOut = 5000 * time.Millisecond
	IsrChangePropagationMaxDelay = 60000 * time.Millisecond
)

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// IsrChangePropagation batches the partitions whose ISR this broker changed
// into /isr_change_notification/isr_change_ nodes (isrChangeSet and the
// isr-change-propagation task of ReplicaManager). Only the notification is
// delayed: the state znode was written when the change was made.
//
// The owner calls Due every IsrChangePropagationInterval, first at start-up,
// and writes one node holding what it returns. Not safe for concurrent use.
type IsrChangePropagation struct {
	pending         map[TopicPartition]struct{}
	lastIsrChange   time.Time
	lastPropagation time.Time
}

// NewIsrChangePropagation starts both timers at the broker's start time,
// as Kafka does (not at zero).
func NewIsrChangePropagation(start time.Time) *IsrChangePropagation {
	return &IsrChangePropagation{pending: map[TopicPartition]struct{}{}, lastIsrChange: start, lastPropagation: start}
}

// Record notes a committed ISR change of tp at now.
func (p *IsrChangePropagation) Record(tp TopicPartition, now time.Time) {
	p.pending[tp] = struct{}{}
	p.lastIsrChange = now
}

// Due returns the partitions to announce now, sorted, and clears them; nil
// when nothing is due. The rule, with Kafka's strict comparisons: the set is
// non-empty and either no change for more than 5 s (a burst has settled) or
// no notification for more than 60 s (steady churn still gets announced).
func (p *IsrChangePropagation) Due(now time.Time) []TopicPartition {
	if len(p.pending) == 0 {
		return nil
	}
	if !(p.lastIsrChange.Add(IsrChangePropagationBlackOut).Before(now) ||
		p.lastPropagation.Add(IsrChangePropagationMaxDelay).Before(now)) {
		return nil
	}
	out := make([]TopicPartition, 0, len(p.pending))
	for tp := range p.pending {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	clear(p.pending)
	p.lastPropagation = now
	return out
}

// Restore puts tp back after its notification could not be written; the
// timers stay as they are, since no change and no notification happened.
func (p *IsrChangePropagation) Restore(tp TopicPartition) {
	p.pending[tp] = struct{}{}
}

// Pending is the number of partitions waiting to be announced.
func (p *IsrChangePropagation) Pending() int { return len(p.pending) }
