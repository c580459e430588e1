package server

import (
	"context"
	"time"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// coordinatorAppend writes a coordinator's records to p, a partition this
// broker leads, as one batch of Kafka's AppendOrigin.COORDINATOR (checked
// for the producer epoch, never the sequence), and returns once every
// in-sync replica has it or timeout passed: a coordinator acts on a write
// only when a new leader would find it too.
func (b *Broker) coordinatorAppend(ctx context.Context, p *replica.Partition, opts logstore.BatchOptions, recs []logstore.Record, acks int16, guard uint64, timeout time.Duration) (logstore.AppendInfo, error) {
	opts.PartitionLeaderEpoch = -1
	batch, err := logstore.EncodeBatch(opts, recs)
	if err != nil {
		return logstore.AppendInfo{}, err
	}
	info, err := p.AppendAsLeader([]logstore.Batch{batch}, acks, replica.AppendRules{LogAppendTime: -1, Origin: replica.OriginCoordinator, VerificationGuard: guard})
	if err != nil {
		return info, err
	}
	return info, waitCommitted(ctx, b.delayed, p, info.LastOffset+1, timeout)
}

// waitCommitted waits in the purgatory until the partition's HW reaches
// requiredOffset.
func waitCommitted(ctx context.Context, delayed *delayedOps, p *replica.Partition, requiredOffset int64, timeout time.Duration) error {
	return awaitReplication(ctx, delayed, []*replica.Partition{p}, []int64{requiredOffset}, timeout).err(0)
}

// awaitReplication waits in the purgatory until every partition's HW
// reaches its required offset, the timeout passes or ctx ends, in one
// delayed operation; its err(i) is partition i's outcome
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER, REQUEST_TIMED_OUT).
func awaitReplication(ctx context.Context, delayed *delayedOps, ps []*replica.Partition, required []int64, timeout time.Duration) *delayedProduce {
	now := delayed.Now()
	op := newDelayedProduce(len(ps), now.Add(timeout))
	for i, p := range ps {
		op.set(i, p, required[i])
	}
	d := delayed.TryCompleteElseWatch(op, op.parts, now, op.verdict.Deadline)
	select {
	case <-d.Done():
	case <-ctx.Done():
		d.ForceComplete()
	}
	return op
}
