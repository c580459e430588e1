package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/kafkazk"
)

// AlterPartitionItem is one partition of an AlterPartition request
// (KIP-497): the ISR its leader wants, stamped with the leader epoch and
// partition epoch (state znode version) the leader knows. Topic is empty
// when the request names topics by id.
type AlterPartitionItem struct {
	Topic               string
	TopicID             [16]byte
	Partition           int32
	LeaderEpoch         int32
	NewIsr              []int32
	LeaderRecoveryState int8
	PartitionEpoch      int32
}

// AlterPartitionResult is one partition's answer: Err (a kerr error), or
// the partition's state after the request.
type AlterPartitionResult struct {
	Err                 error
	Leader              int32
	LeaderEpoch         int32
	ISR                 []int32
	LeaderRecoveryState int8
	PartitionEpoch      int32
}

func resultOf(l leaderAndIsr) AlterPartitionResult {
	return AlterPartitionResult{Leader: l.Leader, LeaderEpoch: l.LeaderEpoch, ISR: slices.Clone(l.ISR),
		LeaderRecoveryState: l.LeaderRecoveryState, PartitionEpoch: l.PartitionEpoch}
}

// checkBrokerEpoch is the check the controller makes of a broker's
// request before acting on it: the sender must be a live broker at the
// epoch it names, or its view is stale (a restarted broker's leftover
// request, or a broker this controller fenced). unknown is the error for
// a broker not registered at all, which differs by request: Kafka answers
// AlterPartition with STALE_BROKER_EPOCH, AllocateProducerIds with
// BROKER_ID_NOT_REGISTERED.
func checkBrokerEpoch(ctx *controllerContext, brokerID int32, brokerEpoch int64, unknown error) error {
	b, ok := ctx.brokers[brokerID]
	switch {
	case !ok:
		return unknown
	case b.Epoch != brokerEpoch:
		return kerr.StaleBrokerEpoch
	}
	return nil
}

// decideAlterPartition is one partition of tryProcessAlterPartition, in
// its order: a newer epoch than ours means this controller is behind
// (NOT_CONTROLLER, so the leader looks for the new one); an older leader
// epoch is fenced; a request for the state the partition already has is
// answered with it (idempotent retries, before the partition-epoch check);
// an older partition epoch is INVALID_UPDATE_VERSION; a RECOVERING state
// may hold only the leader and never follows RECOVERED; every new ISR
// member must be a live broker that is not shutting down (INELIGIBLE_REPLICA,
// OPERATION_NOT_ATTEMPTED before v2). Otherwise next is the state to write.
func decideAlterPartition(ctx *controllerContext, brokerID int32, version int16, tp kafkazk.TopicPartition, it AlterPartitionItem) (next *leaderAndIsr, res AlterPartitionResult) {
	cur, ok := ctx.leadership[tp]
	if !ok {
		return nil, AlterPartitionResult{Err: kerr.UnknownTopicOrPartition}
	}
	want := leaderAndIsr{Leader: brokerID, LeaderEpoch: it.LeaderEpoch, ISR: it.NewIsr,
		LeaderRecoveryState: it.LeaderRecoveryState, PartitionEpoch: it.PartitionEpoch}
	switch {
	case want.PartitionEpoch > cur.PartitionEpoch || want.LeaderEpoch > cur.LeaderEpoch:
		return nil, AlterPartitionResult{Err: kerr.NotController}
	case want.LeaderEpoch < cur.LeaderEpoch:
		return nil, AlterPartitionResult{Err: kerr.FencedLeaderEpoch}
	case want.Leader == cur.Leader && want.LeaderEpoch == cur.LeaderEpoch &&
		slices.Equal(want.ISR, cur.ISR) && want.LeaderRecoveryState == cur.LeaderRecoveryState:
		return nil, resultOf(cur.leaderAndIsr)
	case want.PartitionEpoch < cur.PartitionEpoch:
		return nil, AlterPartitionResult{Err: kerr.InvalidUpdateVersion}
	case want.LeaderRecoveryState == kafkazk.LeaderRecovering && len(want.ISR) > 1,
		cur.LeaderRecoveryState == kafkazk.LeaderRecovered && want.LeaderRecoveryState == kafkazk.LeaderRecovering:
		return nil, AlterPartitionResult{Err: kerr.InvalidRequest}
	}
	for _, id := range want.ISR {
		if !ctx.isLive(id) || ctx.shuttingDown[id] {
			if version > 1 {
				return nil, AlterPartitionResult{Err: kerr.IneligibleReplica}
			}
			return nil, AlterPartitionResult{Err: kerr.OperationNotAttempted}
		}
	}
	want.ISR = slices.Clone(want.ISR)
	return &want, AlterPartitionResult{}
}
