package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Broker 2 shuts down: the partitions it leads are to be elected away, it
// leaves the ISRs of those it follows after a StopReplica (no delete) at
// the cached leader epoch; single-replica partitions, partitions without a
// state and topics being deleted are left alone; the context is untouched.
func TestDecideControlledShutdown(t *testing.T) {
	led, followed, single, fresh, doomed := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1},
		kafkazk.TopicPartition{Topic: "t", Partition: 2}, kafkazk.TopicPartition{Topic: "t", Partition: 3}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{
		led: {2, 1}, followed: {1, 2, 3}, single: {2}, fresh: {2, 3}, doomed: {2, 1},
		{Topic: "t", Partition: 4}: {1, 3},
	})
	ctx.leadership[led] = leadership(2, 3, []int32{2, 1}, 5)
	ctx.leadership[followed] = leadership(1, 7, []int32{1, 2, 3}, 9)
	ctx.leadership[single] = leadership(2, 0, []int32{2}, 0)
	ctx.leadership[doomed] = leadership(2, 0, []int32{2, 1}, 0)
	ctx.topicsToDelete["doomed"] = true

	d := decideControlledShutdown(ctx, 2, 20)
	if d.err != nil || !slices.Equal(d.led, []kafkazk.TopicPartition{led}) || !slices.Equal(d.followed, []kafkazk.TopicPartition{followed}) {
		t.Fatalf("decision %+v", d)
	}
	sent := sentOf(d.requests)
	if len(sent) != 1 || sent[0].Broker != 2 {
		t.Fatalf("requests %+v", sent)
	}
	stop, ok := sent[0].Req.(*kmsg.StopReplicaRequest)
	if !ok || len(stop.Topics) != 1 || stop.Topics[0].Topic != "t" || len(stop.Topics[0].PartitionStates) != 1 {
		t.Fatalf("StopReplica %+v", sent[0].Req)
	}
	if p := stop.Topics[0].PartitionStates[0]; p.Partition != 1 || p.Delete || p.LeaderEpoch != 7 {
		t.Errorf("StopReplica partition %+v", p)
	}
	if ctx.shuttingDown[2] {
		t.Error("decision marked the broker shutting down")
	}

	// The current or an unknown (-1) epoch is accepted, an older one is
	// stale; an unregistered broker is not available.
	if d := decideControlledShutdown(ctx, 2, -1); d.err != nil {
		t.Errorf("unknown epoch: %v", d.err)
	}
	if d := decideControlledShutdown(ctx, 2, 19); !errors.Is(d.err, kerr.StaleBrokerEpoch) || d.led != nil || d.requests != nil {
		t.Errorf("stale epoch: %+v", d)
	}
	if d := decideControlledShutdown(ctx, 4, -1); !errors.Is(d.err, kerr.BrokerNotAvailable) {
		t.Errorf("unknown broker: %+v", d)
	}

	// What is left: multi-replica partitions it still leads, the topic
	// being deleted included; never nil, as the response lists it.
	if got := controlledShutdownRemaining(ctx, 2); !slices.Equal(got, []kafkazk.TopicPartition{doomed, led}) {
		t.Errorf("remaining %v", got)
	}
	if got := controlledShutdownRemaining(ctx, 3); got == nil || len(got) != 0 {
		t.Errorf("remaining for a follower: %#v", got)
	}
}
