package kafkazk

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kbroker/kbroker/zkstore"
)

// WriteIsrChangeNotification creates one persistent sequential
// /isr_change_notification/isr_change_ node listing the partitions.
func WriteIsrChangeNotification(zk zkstore.Client, tps []TopicPartition) error {
	_, err := zk.Create(IsrChangeNotificationPath+"/"+IsrChangePrefix, EncodePartitionList(tps), zkstore.ModePersistentSequential)
	return err
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
// state znode is set only if still at expected. On a version conflict, a
// znode that already holds exactly s (our own retried write) counts as
// success. Returns the new zkVersion (the partition epoch).
func UpdateIsr(zk zkstore.Client, tp TopicPartition, s LeaderAndIsr, expected int32) (int32, error) {
	return updateIsr(zk, tp, s, expected, false)
}

// UpdateIsrPastController is UpdateIsr for an ISR shrink that a leader
// asked the controller for (AlterPartition) and then, with no answer,
// writes itself. The controller may have made the very same change from
// that request before it went quiet, stamped with its own epoch rather
// than the leader's copy: a conflict whose znode holds this leader, leader
// epoch and ISR counts as success whatever controller epoch it carries.
// Anything else is a conflict, as for UpdateIsr.
func UpdateIsrPastController(zk zkstore.Client, tp TopicPartition, s LeaderAndIsr, expected int32) (int32, error) {
	return updateIsr(zk, tp, s, expected, true)
}

// updateIsr writes s at version expected; on a version conflict it reads
// the znode once and counts it as success if it holds s, with any
// controller epoch when anyControllerEpoch is set.
func updateIsr(zk zkstore.Client, tp TopicPartition, s LeaderAndIsr, expected int32, anyControllerEpoch bool) (int32, error) {
	if len(s.ISR) == 0 {
		return 0, fmt.Errorf("controller: refusing to write an empty ISR for %s-%d", tp.Topic, tp.Partition)
	}
	want := PartitionStateZNode(s)
	path := PartitionStatePath(tp.Topic, tp.Partition)
	st, err := zk.Set(path, want.Encode(), expected)
	if err == nil {
		return st.Version, nil
	}
	if !errors.Is(err, zkstore.ErrBadVersion) {
		return 0, fmt.Errorf("writing ISR of %s-%d: %w", tp.Topic, tp.Partition, err)
	}
	data, st, gerr := zk.Get(path)
	if gerr != nil {
		return 0, fmt.Errorf("writing ISR of %s-%d: %w", tp.Topic, tp.Partition, ErrIsrVersionConflict)
	}
	if got, derr := DecodePartitionStateZNode(data); derr == nil && sameLeadership(got, want) &&
		(anyControllerEpoch || got.ControllerEpoch == want.ControllerEpoch) {
		return st.Version, nil
	}
	return 0, fmt.Errorf("writing ISR of %s-%d at version %d: %w", tp.Topic, tp.Partition, expected, ErrIsrVersionConflict)
}

// ReconcileIsr finds out whether a write of s at version expected, whose
// outcome was lost with the connection, reached ZooKeeper: applied with
// the znode's version if the znode holds s; not applied if the znode is
// still at expected (the write may be proposed again); otherwise
// ErrIsrVersionConflict, as for a refused write.
func ReconcileIsr(zk zkstore.Client, tp TopicPartition, s LeaderAndIsr, expected int32) (version int32, applied bool, err error) {
	data, st, err := zk.Get(PartitionStatePath(tp.Topic, tp.Partition))
	switch {
	case err != nil:
		return 0, false, err
	case holds(data, PartitionStateZNode(s)):
		return st.Version, true, nil
	case st.Version == expected:
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("ISR of %s-%d moved past version %d: %w", tp.Topic, tp.Partition, expected, ErrIsrVersionConflict)
}

// holds: the state znode's data is want, whatever its version (Kafka's
// ReplicationUtils.checkLeaderAndIsrZkData).
func holds(data []byte, want PartitionStateZNode) bool {
	got, err := DecodePartitionStateZNode(data)
	return err == nil && sameLeadership(got, want) && got.ControllerEpoch == want.ControllerEpoch
}

// sameLeadership: got and want name the same leader, leader epoch, ISR and
// recovery state.
func sameLeadership(got, want PartitionStateZNode) bool {
	return got.Leader == want.Leader && got.LeaderEpoch == want.LeaderEpoch &&
		slices.Equal(got.ISR, want.ISR) && got.LeaderRecoveryState == want.LeaderRecoveryState
}
