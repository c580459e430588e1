package replica

import (
	"errors"
	"sync"
)

// The live side of leader-made ISR changes (Partition.maybeShrinkIsr /
// maybeExpandIsr and their ZooKeeper write): the state machine proposes,
// Partition writes the state znode through the IsrWriter outside its lock,
// then reports the outcome back.

// UpdateFollowerFetch records a fetch from follower replicaID served by
// this leader: fetchOffset is the follower's LEO, leaderLogEndOffset the
// leader's LEO read before the records were read. It may move the HW (and
// wake waiters) and may start an ISR expansion.
func (p *Partition) UpdateFollowerFetch(replicaID int32, fetchOffset, followerLogStartOffset, leaderLogEndOffset int64) error {
	p.mu.Lock()
	if !p.leader {
		p.unlock()
		return ErrNotLeader
	}
	res, err := p.leaderState.UpdateFollowerFetch(replicaID, fetchOffset, followerLogStartOffset, p.opts.Now(), leaderLogEndOffset)
	if res.HighWatermarkMoved {
		p.highWatermarkMovedLocked()
	}
	p.unlock()
	if res.IsrExpansion != nil {
		p.writeIsr(*res.IsrExpansion)
	}
	return err
}

// MaybeShrinkIsr is the isr-expiration task's work for this partition,
// run every replica.lag.time.max.ms / 2.
func (p *Partition) MaybeShrinkIsr() {
	p.mu.Lock()
	var c *IsrChange
	if p.leader {
		now := p.opts.Now()
		c = p.leaderState.MaybeShrinkIsr(now)
		// Followers outside the ISR hold the HW back while they count as
		// caught up, and that ends with time, not with a fetch or an
		// append: a broker that left in a controlled shutdown stops
		// fetching, and an idempotent producer only resends batches the
		// log already holds. Without this the HW, and every acks=all
		// write, waited for the next new record.
		if c == nil && p.leaderState.MaybeIncrementHighWatermark(now) {
			p.highWatermarkMovedLocked()
		}
	}
	p.unlock()
	if c != nil {
		p.writeIsr(*c)
	}
}

// maybeShrinkIsrAside runs MaybeShrinkIsr on a goroutine of its own,
// counted in running, unless the previous one is still running. The
// expiration task checks every partition in turn, and an ISR write waits
// on ZooKeeper or the controller: one partition's write to a controller
// that stopped answering held up every other partition's check behind it,
// and with it their acks=all writes, which waited for a silent follower to
// leave the ISR.
func (p *Partition) maybeShrinkIsrAside(running *sync.WaitGroup) {
	if !p.shrinking.CompareAndSwap(false, true) {
		return
	}
	running.Add(1)
	go func() {
		defer running.Done()
		defer p.shrinking.Store(false)
		p.MaybeShrinkIsr()
	}()
}

// writeIsr persists a proposed ISR change and applies the outcome. With no
// writer (standalone) there is nothing to persist: the change is applied.
func (p *Partition) writeIsr(c IsrChange) {
	var (
		version = c.PartitionEpoch + 1
		err     error
	)
	if w := p.opts.IsrWriter; w != nil {
		version, err = w.WriteIsr(p.Topic, p.Index, p.opts.LocalID, c)
	}
	p.mu.Lock()
	defer p.unlock()
	if errors.Is(err, ErrIsrReplicaIneligible) {
		now := p.opts.Now()
		if p.leaderState.RefuseIsrChange(c, now) && p.leaderState.MaybeIncrementHighWatermark(now) {
			p.highWatermarkMovedLocked()
		}
		return
	}
	if errors.Is(err, ErrIsrWriteUnsent) {
		// Kafka's ZooKeeper client retries until it is connected again;
		// here the change is dropped and proposed afresh by the next
		// check, against whatever the leader knows then.
		p.leaderState.AbandonIsrChange(c)
		return
	}
	if err != nil {
		// A version conflict means the controller changed the partition;
		// 3.9 keeps the old ISR and waits for its LeaderAndIsr.
		p.leaderState.FailIsrChange(c)
		if p.opts.IsrChanged != nil {
			p.opts.IsrChanged(c.Kind, true)
		}
		return
	}
	applied, moved := p.leaderState.CompleteIsrChange(c, version, p.opts.Now())
	if applied && p.opts.IsrWriter != nil {
		p.opts.IsrWriter.RecordIsrChange(p.Topic, p.Index)
	}
	if applied && p.opts.IsrChanged != nil {
		p.opts.IsrChanged(c.Kind, false)
	}
	if moved || applied {
		p.highWatermarkMovedLocked()
	}
}

// HasSilentIsrFollower: see LeaderState.HasSilentIsrFollower.
func (p *Partition) HasSilentIsrFollower() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader && p.leaderState.HasSilentIsrFollower(p.opts.Now())
}
