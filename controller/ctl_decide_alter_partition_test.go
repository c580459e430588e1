package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/kafkazk"
)

// AlterPartition's checks, in Kafka's order (KafkaController
// .tryProcessAlterPartition), for a partition led by broker 1 at leader
// epoch 5 with ISR [1 2 3] at partition epoch 9.
func TestDecideAlterPartition(t *testing.T) {
	tp := kafkazk.TopicPartition{Topic: "t", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{tp: {1, 2, 3}})
	ctx.leadership[tp] = leadership(1, 5, []int32{1, 2, 3}, 9)
	item := func(leaderEpoch int32, isr []int32, partitionEpoch int32) AlterPartitionItem {
		return AlterPartitionItem{Topic: "t", LeaderEpoch: leaderEpoch, NewIsr: isr, PartitionEpoch: partitionEpoch}
	}
	for _, tc := range []struct {
		name    string
		version int16
		tp      kafkazk.TopicPartition
		it      AlterPartitionItem
		err     error
		write   []int32 // the ISR to write, when accepted
		current bool    // answered with the current state
	}{
		{name: "shrink", version: 3, tp: tp, it: item(5, []int32{1, 2}, 9), write: []int32{1, 2}},
		{name: "unknown partition", version: 3, tp: kafkazk.TopicPartition{Topic: "t", Partition: 7}, it: item(5, []int32{1}, 9), err: kerr.UnknownTopicOrPartition},
		{name: "newer partition epoch", version: 3, tp: tp, it: item(5, []int32{1, 2}, 10), err: kerr.NotController},
		{name: "newer leader epoch", version: 3, tp: tp, it: item(6, []int32{1, 2}, 9), err: kerr.NotController},
		{name: "older leader epoch", version: 3, tp: tp, it: item(4, []int32{1, 2}, 9), err: kerr.FencedLeaderEpoch},
		{name: "already so, stale partition epoch", version: 3, tp: tp, it: item(5, []int32{1, 2, 3}, 8), current: true},
		{name: "older partition epoch", version: 3, tp: tp, it: item(5, []int32{1, 2}, 8), err: kerr.InvalidUpdateVersion},
		{name: "dead replica", version: 3, tp: tp, it: item(5, []int32{1, 2, 3, 4}, 9), err: kerr.IneligibleReplica},
		{name: "dead replica before v2", version: 1, tp: tp, it: item(5, []int32{1, 4}, 9), err: kerr.OperationNotAttempted},
		{name: "recovering with followers", version: 3, tp: tp, it: AlterPartitionItem{LeaderEpoch: 5, NewIsr: []int32{1, 2}, LeaderRecoveryState: kafkazk.LeaderRecovering, PartitionEpoch: 9}, err: kerr.InvalidRequest},
		{name: "back to recovering", version: 3, tp: tp, it: AlterPartitionItem{LeaderEpoch: 5, NewIsr: []int32{1}, LeaderRecoveryState: kafkazk.LeaderRecovering, PartitionEpoch: 9}, err: kerr.InvalidRequest},
	} {
		next, res := decideAlterPartition(ctx, 1, tc.version, tc.tp, tc.it)
		switch {
		case tc.err != nil:
			if next != nil || !errors.Is(res.Err, tc.err) {
				t.Errorf("%s: next %+v, result %+v; want %v", tc.name, next, res, tc.err)
			}
		case tc.current:
			if next != nil || res.Err != nil || res.PartitionEpoch != 9 || !slices.Equal(res.ISR, []int32{1, 2, 3}) {
				t.Errorf("%s: next %+v, result %+v; want the current state", tc.name, next, res)
			}
		default:
			if next == nil || res.Err != nil || !slices.Equal(next.ISR, tc.write) || next.Leader != 1 || next.LeaderEpoch != 5 {
				t.Errorf("%s: next %+v, result %+v; want ISR %v written", tc.name, next, res, tc.write)
			}
		}
	}

	// A broker shutting down is not eligible either.
	ctx.shuttingDown[3] = true
	if _, res := decideAlterPartition(ctx, 1, 3, tp, item(5, []int32{1, 3}, 9)); !errors.Is(res.Err, kerr.IneligibleReplica) {
		t.Errorf("shutting-down replica: %+v", res)
	}
	// The sender must be live at the epoch it names.
	if err := checkBrokerEpoch(ctx, 1, 10, kerr.StaleBrokerEpoch); err != nil {
		t.Errorf("current epoch: %v", err)
	}
	for _, tc := range []struct {
		id    int32
		epoch int64
	}{{1, 9}, {4, 40}} {
		if err := checkBrokerEpoch(ctx, tc.id, tc.epoch, kerr.StaleBrokerEpoch); !errors.Is(err, kerr.StaleBrokerEpoch) {
			t.Errorf("broker %d epoch %d: %v", tc.id, tc.epoch, err)
		}
	}
}
