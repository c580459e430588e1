package zkbroker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/zkstore"
)

// isrChangePropagator is the leader side's isr-change-propagation state:
// replica.IsrChangePropagation holds the rule; this adds the lock, because
// leaders record from any goroutine while the task takes the due set.
type isrChangePropagator struct {
	mu    sync.Mutex
	rules *replica.IsrChangePropagation
}

func newIsrChangePropagator(start time.Time) *isrChangePropagator {
	return &isrChangePropagator{rules: replica.NewIsrChangePropagation(start)}
}

func (p *isrChangePropagator) record(tp kafkazk.TopicPartition, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules.Record(replica.TopicPartition(tp), now)
}

// due returns the partitions to announce now, sorted, if any, and takes
// them out.
func (p *isrChangePropagator) due(now time.Time) []kafkazk.TopicPartition {
	p.mu.Lock()
	due := p.rules.Due(now)
	p.mu.Unlock()
	if due == nil {
		return nil
	}
	out := make([]kafkazk.TopicPartition, len(due))
	for i, tp := range due {
		out[i] = kafkazk.TopicPartition(tp)
	}
	return out
}

// restore puts back partitions whose notification could not be written.
func (p *isrChangePropagator) restore(tps []kafkazk.TopicPartition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tp := range tps {
		p.rules.Restore(replica.TopicPartition(tp))
	}
}

// RecordIsrChange notes that this broker, as the partition's leader,
// changed its ISR in ZooKeeper (UpdateIsr); the change is announced to the
// controller by the isr-change-propagation task.
func (n *Node) RecordIsrChange(topic string, partition int32) {
	n.isr.record(kafkazk.TopicPartition{Topic: topic, Partition: partition}, n.cfg.Now())
}

// propagateIsrChanges is the isr-change-propagation task: every 2.5 s.
func (n *Node) propagateIsrChanges(ctx context.Context) {
	ticks := n.cfg.IsrChangePropagationTicks
	if ticks == nil {
		t := time.NewTicker(replica.IsrChangePropagationInterval)
		defer t.Stop()
		ticks = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		tps := n.isr.due(n.cfg.Now())
		if len(tps) == 0 {
			continue
		}
		zk, err := n.client()
		if err == nil {
			err = kafkazk.WriteIsrChangeNotification(zk, tps)
		}
		if err != nil {
			n.log.Warn("writing ISR change notification, will retry", "err", err)
			n.isr.restore(tps)
		}
	}
}

// UpdateIsr is a partition leader's conditional write of its ISR
// (ZkAlterPartitionManager via KafkaZkClient.conditionalUpdatePath): the
// state znode is set only if still at expectedZkVersion. On a version
// conflict, a znode that already holds exactly newState (our own retried
// write) counts as success. Returns the new zkVersion (the partition epoch).
func (n *Node) UpdateIsr(topic string, partition int32, newState kafkazk.LeaderAndIsr, expectedZkVersion int32) (int32, error) {
	return n.writeIsr(kafkazk.UpdateIsr, "ISR change not written", topic, partition, newState, expectedZkVersion)
}

// writeIsr is one of a leader's conditional ISR writes (write), settled by
// reading the znode back if the connection closed before its answer.
func (n *Node) writeIsr(write func(zkstore.Client, kafkazk.TopicPartition, kafkazk.LeaderAndIsr, int32) (int32, error), failed string,
	topic string, partition int32, newState kafkazk.LeaderAndIsr, expectedZkVersion int32) (int32, error) {
	zk, err := n.client()
	if err != nil {
		return 0, err
	}
	tp := kafkazk.TopicPartition{Topic: topic, Partition: partition}
	v, err := write(zk, tp, newState, expectedZkVersion)
	if errors.Is(err, zkstore.ErrConnectionClosed) {
		v, err = n.reconcileIsr(tp, newState, expectedZkVersion, err)
	}
	if err != nil {
		n.log.Warn(failed, "topic", topic, "partition", partition, "isr", newState.ISR,
			"leaderEpoch", newState.LeaderEpoch, "expectedZkVersion", expectedZkVersion, "err", err)
	}
	return v, err
}

// ShrinkIsrPastController writes a leader's ISR shrink to the state znode
// itself, conditional on expectedZkVersion, after the controller did not
// answer its AlterPartition, and announces it at once under
// /isr_change_notification: the controller re-reads the znode, tells every
// broker, and takes the leader's next AlterPartition against the new
// version. This is the leader's own write of inter.broker.protocol.version
// below 2.7-IV2, which every ZooKeeper-mode controller still watches for;
// the version condition fences it exactly as it fenced those leaders.
func (n *Node) ShrinkIsrPastController(topic string, partition int32, newState kafkazk.LeaderAndIsr, expectedZkVersion int32) (int32, error) {
	v, err := n.writeIsr(kafkazk.UpdateIsrPastController, "ISR shrink not written past the controller", topic, partition, newState, expectedZkVersion)
	if err != nil {
		return 0, err
	}
	n.log.Info("ISR shrink written to ZooKeeper by the leader: the controller did not answer", "topic", topic, "partition", partition,
		"isr", newState.ISR, "zkVersion", v)
	tp := kafkazk.TopicPartition{Topic: topic, Partition: partition}
	if zk, err := n.client(); err != nil || kafkazk.WriteIsrChangeNotification(zk, []kafkazk.TopicPartition{tp}) != nil {
		// The periodic task announces it instead.
		n.RecordIsrChange(topic, partition)
	}
	return v, nil
}

// reconcileIsr settles an ISR write whose connection closed before its
// answer came: the write may have been applied. A leader that took it for
// unsent proposed its next change against the old version, found the
// znode holding the first one, and stopped changing its ISR until a
// LeaderAndIsr that never came (its ISR in ZooKeeper stuck at the leader
// alone). So the outcome is read once the client is connected again, for
// at most a session timeout, as Kafka's ZooKeeper client retries a
// request until it is connected again.
func (n *Node) reconcileIsr(tp kafkazk.TopicPartition, s kafkazk.LeaderAndIsr, expected int32, cause error) (int32, error) {
	deadline := time.Now().Add(n.cfg.SessionTimeout)
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		zk, err := n.client()
		if err != nil {
			continue
		}
		v, applied, err := kafkazk.ReconcileIsr(zk, tp, s, expected)
		switch {
		case errors.Is(err, zkstore.ErrConnectionClosed) || errors.Is(err, ErrNotConnected):
			continue
		case err != nil:
			return 0, err
		case applied:
			n.log.Info("ISR change written before the connection closed", "topic", tp.Topic, "partition", tp.Partition, "isr", s.ISR, "zkVersion", v)
			return v, nil
		}
		return 0, cause
	}
	return 0, cause
}
