package controller

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ISR change notification: the controller re-reads the listed states,
// sends UpdateMetadata (no LeaderAndIsr) to every broker and deletes the
// nodes it handled.
func TestIsrChangeNotification(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	h.ch.Take()
	v, err := kafkazk.UpdateIsr(h.admin, kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, ISR: []int32{1, 3}, ControllerEpoch: 1}, 0)
	if err != nil || v != 1 {
		t.Fatalf("leader ISR write: %d %v", v, err)
	}
	if err := kafkazk.WriteIsrChangeNotification(h.admin, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "unknown", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	h.run()
	sent := h.ch.Take()
	if lai := controllertest.LeaderAndIsrs(sent); len(lai) != 0 {
		t.Errorf("LeaderAndIsr sent for an ISR change: %v", lai)
	}
	parts, _ := controllertest.UpdateMetadatas(sent)
	for _, id := range []int32{1, 2, 3} {
		if v := parts[id][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !slices.Equal(v.ISR, []int32{1, 3}) || v.Leader != 1 {
			t.Errorf("UpdateMetadata to %d: %+v", id, v)
		}
	}
	kids, _, _ := h.admin.Children(kafkazk.IsrChangeNotificationPath)
	if len(kids) != 0 {
		t.Errorf("notifications left: %v", kids)
	}
	if st := h.c.ctx.leadership[kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; st.PartitionEpoch != 1 {
		t.Errorf("cached partition epoch %d", st.PartitionEpoch)
	}
}

// Controlled shutdown: leadership moves to another ISR member (the
// shutting-down broker still hears the LeaderAndIsr and becomes a
// follower), it leaves the ISR of partitions it follows (StopReplica
// without delete), and single-replica partitions are neither moved nor
// reported.
func TestControlledShutdown(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}, 1: {2, 1, 3}})
	h.createTopic("solo", map[int32][]int32{0: {1}})
	h.run()
	h.ch.Take()
	epoch := c.ctx.brokers[1].Epoch
	if _, err := c.controlledShutdown(1, epoch-1); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Errorf("stale epoch: %v", err)
	}
	if _, err := c.controlledShutdown(9, -1); !errors.Is(err, kerr.BrokerNotAvailable) {
		t.Errorf("unknown broker: %v", err)
	}
	remaining, err := c.controlledShutdown(1, epoch)
	if err != nil || len(remaining) != 0 {
		t.Fatalf("remaining %v err %v", remaining, err)
	}
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 2 || s.LeaderEpoch != 1 || !slices.Equal(s.ISR, []int32{2, 3}) {
		t.Errorf("orders-0: %+v", s)
	}
	if s, _ := h.state("orders", 1); s.Leader != 2 || s.LeaderEpoch != 1 || !slices.Equal(s.ISR, []int32{2, 3}) {
		t.Errorf("orders-1: %+v", s)
	}
	if s, _ := h.state("solo", 0); s.Leader != 1 || s.LeaderEpoch != 0 {
		t.Errorf("solo-0 (one replica) touched: %+v", s)
	}
	sent := h.ch.Take()
	if v := controllertest.LeaderAndIsrs(sent)[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; v.Leader != 2 {
		t.Errorf("shutting-down broker's LeaderAndIsr for orders-0: %+v", v)
	}
	stops := controllertest.StopReplicas(sent)
	if del, ok := stops[1][kafkazk.TopicPartition{Topic: "orders", Partition: 1}]; !ok || del {
		t.Errorf("StopReplica to 1 for orders-1: sent %v delete %v", ok, del)
	}
	// The shutting-down broker is no longer eligible as leader.
	h.killBroker(2)
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 3 {
		t.Errorf("orders-0 after 2 died: %+v", s)
	}
}

// When the only other ISR member is gone, the broker keeps leading and the
// partition is reported back.
func TestControlledShutdownReportsRemaining(t *testing.T) {
	_, c := newLoneLeaderHarness(t)
	remaining, err := c.controlledShutdown(1, -1)
	if err != nil || !slices.Equal(remaining, []kafkazk.TopicPartition{{Topic: "orders", Partition: 0}}) {
		t.Fatalf("remaining %v err %v", remaining, err)
	}
}

// A controller whose epoch was superseded cannot write: its first write
// fails the /controller_epoch check and its loop ends with
// kafkazk.ErrControllerMoved, leaving ZooKeeper as the new controller left it.
func TestStaleControllerIsFenced(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	old := h.becomeController(1)
	h.createTopic("orders", map[int32][]int32{0: {2, 3}})
	h.run()
	// Broker 1 loses /controller (e.g. a long pause); broker 2 wins epoch 2.
	if err := h.admin.Delete(kafkazk.ControllerPath, -1); err != nil {
		t.Fatal(err)
	}
	st, err := kafkazk.ElectController(h.brokers[2], 2, 1)
	if err != nil || st.Epoch != 2 {
		t.Fatalf("second election %+v %v", st, err)
	}
	before := h.rawState("orders", 0)
	h.killBroker(2)
	err = old.runUntilIdle()
	if !errors.Is(err, kafkazk.ErrControllerMoved) {
		t.Fatalf("stale controller: %v", err)
	}
	if after := h.rawState("orders", 0); after != before {
		t.Errorf("stale controller changed the state: %s -> %s", before, after)
	}
}

// Topic deletion: UpdateMetadata with leader -2, StopReplica with delete
// to each replica, then the znodes go once every replica confirmed. A dead
// replica holds the deletion until its broker returns.
func TestTopicDeletion(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	if _, err := kafkazk.CreateTopic(h.admin, "orders", -1, -1, map[int32][]int32{0: {1, 2}, 1: {2, 1}}, map[string]string{"retention.ms": "1000"}, false, nil, h.cfg.NewTopicID); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.killBroker(1)
	h.run()
	h.ch.Take()
	if err := kafkazk.MarkTopicForDeletion(h.admin, "orders"); err != nil {
		t.Fatal(err)
	}
	h.run()
	sent := h.ch.Take()
	parts, _ := controllertest.UpdateMetadatas(sent)
	if v := parts[2][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; v.Leader != leaderDuringDelete {
		t.Errorf("UpdateMetadata during deletion: %+v", v)
	}
	stops := controllertest.StopReplicas(sent)
	if !stops[2][kafkazk.TopicPartition{Topic: "orders", Partition: 0}] || !stops[2][kafkazk.TopicPartition{Topic: "orders", Partition: 1}] {
		t.Errorf("StopReplica(delete) to 2: %v", stops)
	}
	if ok, _, _ := h.admin.Exists(kafkazk.TopicPath("orders")); !ok {
		t.Fatal("topic deleted while broker 1's replicas were not")
	}
	h.startBroker(1)
	h.run()
	for _, p := range []string{kafkazk.TopicPath("orders"), kafkazk.ConfigEntityPath(kafkazk.ConfigTypeTopic, "orders"), kafkazk.DeleteTopicPath("orders")} {
		if ok, _, _ := h.admin.Exists(p); ok {
			t.Errorf("%s still exists", p)
		}
	}
	if _, ok := h.c.ctx.assignments["orders"]; ok {
		t.Error("deleted topic still in the controller's context")
	}
	// Deleting an unknown topic's marker just goes away.
	zktest.MustCreate(t, h.admin, kafkazk.DeleteTopicPath("ghost"), "", zkstore.ModePersistent)
	h.run()
	if ok, _, _ := h.admin.Exists(kafkazk.DeleteTopicPath("ghost")); ok {
		t.Error("marker of an unknown topic left")
	}
}

// CreatePartitions adds partitions to the topic znode; the controller
// creates their states and sends LeaderAndIsr with IsNew.
func TestPartitionAddition(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}, 1: {2, 3}})
	h.run()
	h.ch.Take()
	if err := kafkazk.CreatePartitions(h.admin, "orders", 2, nil, false, nil); !errors.Is(err, kerr.InvalidPartitions) {
		t.Errorf("same count: %v", err)
	}
	if err := kafkazk.CreatePartitions(h.admin, "orders", 3, [][]int32{{3, 1}}, false, nil); err != nil {
		t.Fatal(err)
	}
	h.run()
	if got := h.rawState("orders", 2); got != `{"controller_epoch":1,"leader":3,"version":1,"leader_epoch":0,"isr":[3,1]}` {
		t.Errorf("orders-2 state %s", got)
	}
	lai := controllertest.LeaderAndIsrs(h.ch.Take())
	if v := lai[1][kafkazk.TopicPartition{Topic: "orders", Partition: 2}]; !v.IsNew || v.Leader != 3 {
		t.Errorf("LeaderAndIsr orders-2: %+v", v)
	}
	if _, ok := lai[1][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; ok {
		t.Error("existing partitions were re-sent")
	}
	// Kafka's assignment continues the round-robin.
	if err := kafkazk.CreatePartitions(h.admin, "orders", 5, nil, false, func(int) int { return 0 }); err != nil {
		t.Fatal(err)
	}
	h.run()
	if n := len(h.c.ctx.assignments["orders"]); n != 5 {
		t.Errorf("partitions %d", n)
	}
}

// An admin call to a controller that has stopped answers NOT_CONTROLLER
// instead of waiting for an event that will never run.
func TestCallAfterStop(t *testing.T) {
	h := newCtlHarness(t, 1)
	c := h.becomeController(1)
	c.stop()
	ran := false
	err := c.call(t.Context(), "probe", func() error { ran = true; return nil })
	if !errors.Is(err, kerr.NotController) || ran {
		t.Fatalf("call after stop: %v ran %v", err, ran)
	}
}

// A failed log directory: the broker's notification brings it a
// LeaderAndIsr for its replicas; those that answer KAFKA_STORAGE_ERROR go
// offline, and a partition it led gets another leader.
func TestLogDirFailure(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}, 1: {2, 1}})
	h.run()
	h.ch.Take()
	h.ch.Respond = func(broker int32, req kmsg.Request) kmsg.Response {
		lai, ok := req.(*kmsg.LeaderAndISRRequest)
		if !ok || broker != 1 {
			return nil
		}
		resp := lai.ResponseKind().(*kmsg.LeaderAndISRResponse)
		for _, ts := range lai.TopicStates {
			rt := kmsg.NewLeaderAndISRResponseTopic()
			rt.TopicID = ts.TopicID
			for _, p := range ts.PartitionStates {
				rp := kmsg.NewLeaderAndISRResponseTopicPartition()
				rp.Partition = p.Partition
				if p.Partition == 0 {
					rp.ErrorCode = kerr.KafkaStorageError.Code
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	if _, err := h.admin.Create(kafkazk.LogDirEventNotificationPath+"/"+kafkazk.LogDirEventPrefix, kafkazk.LogDirEventZNode{Broker: 1, Event: kafkazk.LogDirFailureEvent}.Encode(), zkstore.ModePersistentSequential); err != nil {
		t.Fatal(err)
	}
	h.run()
	if s, _ := h.state("orders", 0); s.Leader != 2 || !slices.Equal(s.ISR, []int32{2}) {
		t.Errorf("orders-0 after its leader's log dir failed: %+v", s)
	}
	if s, _ := h.state("orders", 1); s.Leader != 2 || !slices.Equal(s.ISR, []int32{2, 1}) {
		t.Errorf("orders-1 (replica on a healthy dir) changed: %+v", s)
	}
	parts, _ := controllertest.UpdateMetadatas(h.ch.Take())
	if v := parts[2][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !slices.Equal(v.Offline, []int32{1}) {
		t.Errorf("offline replicas in UpdateMetadata: %+v", v)
	}
	if kids, _, _ := h.admin.Children(kafkazk.LogDirEventNotificationPath); len(kids) != 0 {
		t.Errorf("log dir events left: %v", kids)
	}
}

// AlterPartition end to end on the controller: the leader's shrink is
// written at the next partition epoch and every broker hears of it by
// UpdateMetadata; the same request again is answered with that state;
// one at the old partition epoch with another ISR is INVALID_UPDATE_VERSION,
// and a stale sender epoch is refused whole.
func TestAlterPartitionWritesIsr(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2, 3}})
	h.run()
	h.ch.Take()
	before, version := h.state("orders", 0)
	epoch := c.ctx.brokers[1].Epoch
	shrink := AlterPartitionItem{Topic: "orders", Partition: 0, LeaderEpoch: before.LeaderEpoch, NewIsr: []int32{1, 3}, PartitionEpoch: version}
	res, err := c.alterPartition(1, epoch, 3, []AlterPartitionItem{shrink})
	if err != nil || len(res) != 1 || res[0].Err != nil || !slices.Equal(res[0].ISR, []int32{1, 3}) || res[0].PartitionEpoch != version+1 {
		t.Fatalf("shrink: %+v, %v", res, err)
	}
	if s, v := h.state("orders", 0); !slices.Equal(s.ISR, []int32{1, 3}) || v != version+1 || s.LeaderEpoch != before.LeaderEpoch || s.ControllerEpoch != c.epoch {
		t.Errorf("state znode after the shrink: %+v at version %d", s, v)
	}
	parts, _ := controllertest.UpdateMetadatas(h.ch.Take())
	for _, id := range []int32{1, 2, 3} {
		if _, ok := parts[id][kafkazk.TopicPartition{Topic: "orders", Partition: 0}]; !ok {
			t.Errorf("broker %d got no UpdateMetadata for orders-0", id)
		}
	}
	again, err := c.alterPartition(1, epoch, 3, []AlterPartitionItem{shrink})
	if err != nil || again[0].Err != nil || again[0].PartitionEpoch != version+1 {
		t.Errorf("the same request again: %+v, %v", again, err)
	}
	other := shrink
	other.NewIsr = []int32{1, 2}
	if res, err := c.alterPartition(1, epoch, 3, []AlterPartitionItem{other}); err != nil || !errors.Is(res[0].Err, kerr.InvalidUpdateVersion) {
		t.Errorf("old partition epoch: %+v, %v", res, err)
	}
	if _, err := c.alterPartition(1, epoch-1, 3, []AlterPartitionItem{shrink}); !errors.Is(err, kerr.StaleBrokerEpoch) {
		t.Errorf("stale broker epoch: %v", err)
	}
	byID := shrink
	byID.Topic, byID.TopicID = "", [16]byte{9, 9}
	if res, err := c.alterPartition(1, epoch, 3, []AlterPartitionItem{byID}); err != nil || !errors.Is(res[0].Err, kerr.UnknownTopicID) {
		t.Errorf("unknown topic id: %+v, %v", res, err)
	}
}
