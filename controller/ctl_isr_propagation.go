package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kbroker/kbroker/replica"
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

func (p *isrChangePropagator) record(tp topicPartition, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules.Record(replica.TopicPartition(tp), now)
}

// due returns the partitions to announce now, sorted, if any, and takes
// them out.
func (p *isrChangePropagator) due(now time.Time) []topicPartition {
	p.mu.Lock()
	due := p.rules.Due(now)
	p.mu.Unlock()
	if due == nil {
		return nil
	}
	out := make([]topicPartition, len(due))
	for i, tp := range due {
		out[i] = topicPartition(tp)
	}
	return out
}

// restore puts back partitions whose notification could not be written.
func (p *isrChangePropagator) restore(tps []topicPartition) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, tp := range tps {
		p.rules.Restore(replica.TopicPartition(tp))
	}
}

// writeIsrChangeNotification creates one persistent sequential
// /isr_change_notification/isr_change_ node listing the partitions.
func writeIsrChangeNotification(zk zkClient, tps []topicPartition) error {
	_, err := zk.Create(isrChangeNotificationPath+"/"+isrChangePrefix, encodePartitionList(tps), modePersistentSequential)
	return err
}

// RecordIsrChange notes that this broker, as the partition's leader,
// changed its ISR in ZooKeeper (UpdateIsr); the change is announced to the
// controller by the isr-change-propagation task.
func (n *Node) RecordIsrChange(topic string, partition int32) {
	n.isr.record(topicPartition{topic, partition}, n.cfg.Now())
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
			err = writeIsrChangeNotification(zk, tps)
		}
		if err != nil {
			n.log.Warn("writing ISR change notification, will retry", "err", err)
			n.isr.restore(tps)
		}
	}
}

// LeaderAndIsr is a partition state as a leader writes it to
// /brokers/topics/<t>/partitions/<p>/state.
type LeaderAndIsr struct {
	Leader      int32
	LeaderEpoch int32
	ISR         []int32
	// ControllerEpoch is the epoch of the controller that made the
	// leadership decision: the leader copies the value from the
	// LeaderAndIsr it got, not the current controller's epoch.
	ControllerEpoch     int32
	LeaderRecoveryState int8
}

// ErrIsrVersionConflict: the state znode is not at the expected version
// and does not hold what we tried to write. The leader keeps its ISR and
// waits for the controller's next LeaderAndIsr (ZkAlterPartitionManager).
var ErrIsrVersionConflict = errors.New("controller: partition state changed since the expected version")

// UpdateIsr is a partition leader's conditional write of its ISR
// (ZkAlterPartitionManager via KafkaZkClient.conditionalUpdatePath): the
// state znode is set only if still at expectedZkVersion. On a version
// conflict, a znode that already holds exactly newState (our own retried
// write) counts as success. Returns the new zkVersion (the partition epoch).
func (n *Node) UpdateIsr(topic string, partition int32, newState LeaderAndIsr, expectedZkVersion int32) (int32, error) {
	zk, err := n.client()
	if err != nil {
		return 0, err
	}
	return updateIsr(zk, topicPartition{topic, partition}, newState, expectedZkVersion)
}

func updateIsr(zk zkClient, tp topicPartition, s LeaderAndIsr, expected int32) (int32, error) {
	if len(s.ISR) == 0 {
		return 0, fmt.Errorf("controller: refusing to write an empty ISR for %s-%d", tp.Topic, tp.Partition)
	}
	want := partitionStateZNode(s)
	path := partitionStatePath(tp.Topic, tp.Partition)
	st, err := zk.Set(path, want.encode(), expected)
	if err == nil {
		return st.Version, nil
	}
	if !errors.Is(err, errBadVersion) {
		return 0, fmt.Errorf("writing ISR of %s-%d: %w", tp.Topic, tp.Partition, err)
	}
	data, st, gerr := zk.Get(path)
	if gerr != nil {
		return 0, fmt.Errorf("writing ISR of %s-%d: %w", tp.Topic, tp.Partition, ErrIsrVersionConflict)
	}
	got, derr := decodePartitionStateZNode(data)
	if derr == nil && got.Leader == want.Leader && got.LeaderEpoch == want.LeaderEpoch &&
		slices.Equal(got.ISR, want.ISR) && got.ControllerEpoch == want.ControllerEpoch &&
		got.LeaderRecoveryState == want.LeaderRecoveryState {
		return st.Version, nil
	}
	return 0, fmt.Errorf("writing ISR of %s-%d at version %d: %w", tp.Topic, tp.Partition, expected, ErrIsrVersionConflict)
}
