package controller

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
)

// The pure decisions are tested by calling them on a context built by
// hand: no ZooKeeper, no event loop.

// decideContext is a context with live brokers and partitions assigned
// as given; leaderships are set by each test.
func decideContext(live []int32, assignments map[kafkazk.TopicPartition][]int32) *controllerContext {
	ctx := newControllerContext()
	for _, id := range live {
		ctx.brokers[id] = liveBroker{ID: id, Epoch: int64(id) * 10, Reg: testRegistration(fmt.Sprintf("kb%d", id))}
	}
	for tp, rs := range assignments {
		ctx.setAssignment(tp, replicaAssignment{Replicas: rs})
	}
	return ctx
}

func leadership(leader, epoch int32, isr []int32, version int32) partitionLeadership {
	return partitionLeadership{leaderAndIsr: leaderAndIsr{Leader: leader, LeaderEpoch: epoch, ISR: isr, PartitionEpoch: version}, ControllerEpoch: 1}
}

func TestDecideBrokerChange(t *testing.T) {
	known := map[int32]liveBroker{1: {ID: 1, Epoch: 10}, 2: {ID: 2, Epoch: 20}, 3: {ID: 3, Epoch: 30}}
	current := map[int32]liveBroker{1: {ID: 1, Epoch: 10}, 3: {ID: 3, Epoch: 31}, 4: {ID: 4, Epoch: 40}, 5: {ID: 5, Epoch: 50}}
	d := decideBrokerChange(known, current)
	if !slices.Equal(d.newIDs, []int32{4, 5}) || !slices.Equal(d.deadIDs, []int32{2}) || !slices.Equal(d.bounced, []int32{3}) {
		t.Fatalf("change %+v", d)
	}
	// A bounce is a failure, then a start-up.
	if !slices.Equal(d.gone(), []int32{2, 3}) || !slices.Equal(d.started(), []int32{4, 5, 3}) {
		t.Errorf("gone %v started %v", d.gone(), d.started())
	}
	if d.empty() {
		t.Error("change reported empty")
	}
	if d := decideBrokerChange(known, maps.Clone(known)); !d.empty() {
		t.Errorf("no change: %+v", d)
	}
	// A registration with a lower czxid than the one known is not a bounce.
	if d := decideBrokerChange(known, map[int32]liveBroker{1: {ID: 1, Epoch: 9}, 2: known[2], 3: known[3]}); !d.empty() {
		t.Errorf("older epoch: %+v", d)
	}
}

func TestPartitionsLosingLeader(t *testing.T) {
	o0, o1, o2, d0 := kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.TopicPartition{Topic: "orders", Partition: 1},
		kafkazk.TopicPartition{Topic: "orders", Partition: 2}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{o0: {1, 2}, o1: {2, 3}, o2: {3, 1}, d0: {1, 2}})
	ctx.leadership[o0] = leadership(1, 0, []int32{1, 2}, 0)
	ctx.leadership[o1] = leadership(2, 0, []int32{2, 3}, 0)
	ctx.leadership[o2] = leadership(3, 0, []int32{3, 1}, 0)
	ctx.leadership[d0] = leadership(1, 0, []int32{1, 2}, 0)
	ctx.topicsToDelete["doomed"] = true
	if got := partitionsLosingLeader(ctx, []int32{1, 3}); !slices.Equal(got, []kafkazk.TopicPartition{o0, o2}) {
		t.Errorf("losing leader: %v", got)
	}
}

func TestIsrChangedPartitions(t *testing.T) {
	a0, a1, b0 := kafkazk.TopicPartition{Topic: "a", Partition: 0}, kafkazk.TopicPartition{Topic: "a", Partition: 1}, kafkazk.TopicPartition{Topic: "b", Partition: 0}
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{a0: {1}, a1: {1}, b0: {1}})
	unknown := kafkazk.TopicPartition{Topic: "gone", Partition: 0}
	got := isrChangedPartitions(ctx, [][]kafkazk.TopicPartition{{b0, a1, unknown}, {a1, a0}})
	if !slices.Equal(got, []kafkazk.TopicPartition{a0, a1, b0}) {
		t.Errorf("partitions %v", got)
	}
	if got := isrChangedPartitions(ctx, nil); got != nil {
		t.Errorf("no notification: %v", got)
	}
}

// An ISR change: the states read are cached (Online or Offline from the
// leader's liveness), every live broker gets one UpdateMetadata with them,
// no LeaderAndIsr; a partition being reassigned is handed on; the
// decision itself leaves the context alone.
func TestDecideIsrChange(t *testing.T) {
	o0, o1, o2 := kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.TopicPartition{Topic: "orders", Partition: 1}, kafkazk.TopicPartition{Topic: "orders", Partition: 2}
	ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{o0: {1, 2}, o2: {3, 2}})
	ctx.setAssignment(o1, replicaAssignment{Replicas: []int32{1, 2, 3}, Adding: []int32{3}})
	for _, tp := range []kafkazk.TopicPartition{o0, o1, o2} {
		ctx.leadership[tp] = leadership(1, 0, []int32{1, 2}, 0)
		ctx.states[tp] = partitionOnline
	}
	states := map[kafkazk.TopicPartition]partitionLeadership{
		o0: leadership(1, 0, []int32{1}, 1),
		o1: leadership(2, 1, []int32{2, 1}, 3),
		// o2 is announced but its state znode could not be read.
	}
	d := decideIsrChange(ctx, []kafkazk.TopicPartition{o0, o1, o2}, states)
	if st := ctx.leadership[o0]; !slices.Equal(st.ISR, []int32{1, 2}) {
		t.Fatalf("decision changed the context: %+v", st)
	}
	want := []leadershipUpdate{{o0, states[o0], partitionOnline}, {o1, states[o1], partitionOnline}}
	if len(d.updates) != len(want) {
		t.Fatalf("updates %+v", d.updates)
	}
	for i, u := range d.updates {
		if u.tp != want[i].tp || u.state != want[i].state || !slices.Equal(u.st.ISR, want[i].st.ISR) || u.st.PartitionEpoch != want[i].st.PartitionEpoch {
			t.Errorf("update %d: %+v, want %+v", i, u, want[i])
		}
	}
	if !slices.Equal(d.reassign, []kafkazk.TopicPartition{o1}) {
		t.Errorf("reassign %v", d.reassign)
	}

	ctx.apply(d.updates)
	var sent []controllertest.SentRequest
	for _, o := range d.requests.build(controllerIdentity{ID: 1, Epoch: 1}, "PLAINTEXT") {
		sent = append(sent, controllertest.SentRequest{Broker: o.broker, Req: o.req})
	}
	if lai := controllertest.LeaderAndIsrs(sent); len(lai) != 0 {
		t.Errorf("LeaderAndIsr sent: %v", lai)
	}
	parts, live := controllertest.UpdateMetadatas(sent)
	for _, b := range []int32{1, 2} {
		if len(parts[b]) != 2 || !slices.Equal(parts[b][o0].ISR, []int32{1}) || parts[b][o1].Leader != 2 || !slices.Equal(live[b], []int32{1, 2}) {
			t.Errorf("UpdateMetadata to %d: %+v live %v", b, parts[b], live[b])
		}
	}
	if len(sent) != 2 {
		t.Errorf("requests %d, want one UpdateMetadata per live broker", len(sent))
	}

	// Nothing readable: nothing to send.
	if d := decideIsrChange(ctx, []kafkazk.TopicPartition{o2}, nil); d.requests != nil || len(d.updates) != 0 || len(d.reassign) != 0 {
		t.Errorf("nothing read: %+v", d)
	}
	// A leader that is not live leaves the partition Offline.
	d = decideIsrChange(ctx, []kafkazk.TopicPartition{o2}, map[kafkazk.TopicPartition]partitionLeadership{o2: leadership(3, 2, []int32{3}, 4)})
	if len(d.updates) != 1 || d.updates[0].state != partitionOffline {
		t.Errorf("dead leader: %+v", d.updates)
	}
}

// The offline election asks for the topic's unclean setting only when no
// ISR member is live and the admin did not ask for an unclean election;
// given it, it decides without reading anything.
func TestDecideOfflineElection(t *testing.T) {
	tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}
	ctx := decideContext([]int32{2, 3}, map[kafkazk.TopicPartition][]int32{tp: {1, 2, 3}})
	lostISR := leadership(-1, 4, []int32{1}, 7)

	if d := decideElection(ctx, tp, lostISR, offlineElection, false, decisionInputs{}); !d.needUncleanConfig || d.change {
		t.Fatalf("without the topic config: %+v", d)
	}
	off := decisionInputs{uncleanEnabled: map[string]bool{"orders": false}}
	if d := decideElection(ctx, tp, lostISR, offlineElection, false, off); !errors.Is(d.err, errNoEligibleLeader) || d.change {
		t.Errorf("unclean off: %+v", d)
	}
	on := decisionInputs{uncleanEnabled: map[string]bool{"orders": true}}
	for name, d := range map[string]decision{
		"topic allows":  decideElection(ctx, tp, lostISR, offlineElection, false, on),
		"admin unclean": decideElection(ctx, tp, lostISR, offlineElection, true, decisionInputs{}),
	} {
		if !d.change || !d.unclean || d.next.Leader != 2 || !slices.Equal(d.next.ISR, []int32{2}) || d.next.LeaderEpoch != 5 ||
			d.next.LeaderRecoveryState != kafkazk.LeaderRecovered || !slices.Equal(d.recipients, []int32{2, 3}) {
			t.Errorf("%s: %+v", name, d)
		}
	}
	// A live ISR member is elected cleanly, without the config.
	withISR := leadership(-1, 4, []int32{1, 3}, 7)
	if d := decideElection(ctx, tp, withISR, offlineElection, false, decisionInputs{}); !d.change || d.unclean || d.needUncleanConfig ||
		d.next.Leader != 3 || !slices.Equal(d.next.ISR, []int32{3}) || d.next.LeaderEpoch != 5 {
		t.Errorf("clean: %+v", d)
	}
	if d := decideElection(ctx, kafkazk.TopicPartition{Topic: "nope", Partition: 0}, withISR, offlineElection, false, on); d.err == nil {
		t.Errorf("unknown partition: %+v", d)
	}
}

func TestDecideIsrRemoval(t *testing.T) {
	tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{tp: {1, 2, 3}})
	cur := leadership(2, 3, []int32{2, 1, 3}, 5)
	d := decideIsrRemoval(ctx, tp, cur, 2)
	if !d.change || d.next.Leader != noLeader || !slices.Equal(d.next.ISR, []int32{1, 3}) || d.next.LeaderEpoch != 4 || !slices.Equal(d.recipients, []int32{1, 3}) {
		t.Errorf("leader removed: %+v", d)
	}
	if d := decideIsrRemoval(ctx, tp, cur, 1); !d.change || d.next.Leader != 2 || !slices.Equal(d.next.ISR, []int32{2, 3}) {
		t.Errorf("follower removed: %+v", d)
	}
	// The last ISR member stays.
	if d := decideIsrRemoval(ctx, tp, leadership(2, 3, []int32{2}, 5), 2); !d.change || d.next.Leader != noLeader || !slices.Equal(d.next.ISR, []int32{2}) {
		t.Errorf("last member: %+v", d)
	}
	if d := decideIsrRemoval(ctx, tp, leadership(2, 3, []int32{2}, 5), 3); d.change {
		t.Errorf("not in the ISR: %+v", d)
	}
	if !slices.Equal(cur.ISR, []int32{2, 1, 3}) {
		t.Errorf("decision changed its input: %v", cur.ISR)
	}
}

// A new partition's first state: the first live replica leads, the live
// replicas are the ISR, epoch 0 at the controller's epoch; with no live
// replica it stays New; an unknown partition is left out.
func TestDecideNewPartitions(t *testing.T) {
	p0, p1, p2 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1}, kafkazk.TopicPartition{Topic: "t", Partition: 2}
	ctx := decideContext([]int32{2, 3}, map[kafkazk.TopicPartition][]int32{p0: {1, 3, 2}, p1: {1, 4}})
	inits, none := decideNewPartitions(ctx, []kafkazk.TopicPartition{p0, p1, p2}, 7)
	if len(inits) != 1 || inits[0].tp != p0 || inits[0].st.Leader != 3 || !slices.Equal(inits[0].st.ISR, []int32{3, 2}) ||
		inits[0].st.LeaderEpoch != 0 || inits[0].st.PartitionEpoch != 0 || inits[0].st.ControllerEpoch != 7 ||
		!slices.Equal(inits[0].assignment.Replicas, []int32{1, 3, 2}) {
		t.Errorf("inits %+v", inits)
	}
	if !slices.Equal(none, []kafkazk.TopicPartition{p1}) {
		t.Errorf("no live replica: %v", none)
	}
	if len(ctx.leadership) != 0 || len(ctx.states) != 0 {
		t.Errorf("decision changed the context")
	}
}

func sentOf(b *requestBatch) []controllertest.SentRequest {
	var sent []controllertest.SentRequest
	for _, o := range b.build(controllerIdentity{ID: 1, Epoch: 1}, "PLAINTEXT") {
		sent = append(sent, controllertest.SentRequest{Broker: o.broker, Req: o.req})
	}
	return sent
}

// Broker 3 starts: brokers 1 and 2 hear of it, broker 3 gets every
// partition's metadata, and a LeaderAndIsr for each replica it hosts that
// has a state (not a new partition, not a topic being deleted).
func TestDecideBrokerStartup(t *testing.T) {
	p0, p1, p2, d0 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1},
		kafkazk.TopicPartition{Topic: "t", Partition: 2}, kafkazk.TopicPartition{Topic: "doomed", Partition: 0}
	ctx := decideContext([]int32{1, 2, 3}, map[kafkazk.TopicPartition][]int32{p0: {1, 3}, p1: {1, 2}, p2: {3}, d0: {3, 1}})
	ctx.leadership[p0] = leadership(1, 2, []int32{1}, 4)
	ctx.leadership[p1] = leadership(2, 0, []int32{2, 1}, 0)
	ctx.leadership[d0] = leadership(1, 0, []int32{1}, 0)
	ctx.topicsToDelete["doomed"] = true

	d := decideBrokerStartup(ctx, []int32{3})
	parts, live := controllertest.UpdateMetadatas(sentOf(d.metadata))
	if len(parts[1]) != 0 || len(parts[2]) != 0 || !slices.Equal(live[1], []int32{1, 2, 3}) || !slices.Equal(live[2], []int32{1, 2, 3}) {
		t.Errorf("metadata to the others: %v %v", parts, live)
	}
	// Every partition with a state; the one being deleted says so.
	if _, has := parts[3][p2]; len(parts[3]) != 3 || has || parts[3][p0].Leader != 1 || parts[3][d0].Leader != leaderDuringDelete {
		t.Errorf("metadata to the new broker: %v", parts[3])
	}
	lai := controllertest.LeaderAndIsrs(sentOf(d.replicas))
	if len(lai) != 1 || len(lai[3]) != 1 || lai[3][p0].Leader != 1 || lai[3][p0].LeaderEpoch != 2 || lai[3][p0].ZkVersion != 4 || lai[3][p0].IsNew {
		t.Errorf("LeaderAndIsr: %v", lai)
	}
}
