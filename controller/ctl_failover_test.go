package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Becoming controller: UpdateMetadata with the live brokers goes to every
// broker before any LeaderAndIsr; each replica then gets its partition's
// current state; a topic without state znodes gets them (new partitions).
func TestFailoverSendsMetadataThenLeaderAndIsr(t *testing.T) {
	h := newCtlHarness(t, 1, 2, 3)
	h.createTopic("old", map[int32][]int32{0: {1, 2, 3}})
	// A state left by an earlier controller (epoch 0 never exists, but a
	// pre-existing state is all that matters here).
	if err := kafkazk.CreateRecursive(h.admin, kafkazk.TopicPartitionPath("old", 0)); err != nil {
		t.Fatal(err)
	}
	zktest.MustCreate(t, h.admin, kafkazk.PartitionStatePath("old", 0),
		`{"controller_epoch":0,"leader":2,"version":1,"leader_epoch":5,"isr":[2,3]}`, zkstore.ModePersistent)
	h.createTopic("fresh", map[int32][]int32{0: {3, 1}})
	h.becomeController(1)
	sent := h.ch.Take()

	for _, id := range []int32{1, 2, 3} {
		var kinds []int16
		for _, s := range sent {
			if s.Broker == id {
				kinds = append(kinds, s.Req.Key())
			}
		}
		if len(kinds) < 2 || kinds[0] != 6 || kinds[1] != 4 {
			t.Errorf("broker %d got request keys %v, want UpdateMetadata(6) first, then LeaderAndIsr(4)", id, kinds)
		}
		um := sent[slices.IndexFunc(sent, func(s controllertest.SentRequest) bool { return s.Broker == id })].Req.(*kmsg.UpdateMetadataRequest)
		if len(um.TopicStates) != 0 || len(um.LiveBrokers) != 3 || um.ControllerEpoch != 1 || um.Version != 8 {
			t.Errorf("first UpdateMetadata to %d: %+v", id, um)
		}
	}
	lai := controllertest.LeaderAndIsrs(sent)
	old := kafkazk.TopicPartition{Topic: "old", Partition: 0}
	for _, id := range []int32{1, 2, 3} {
		got := lai[id][old]
		want := controllertest.LaiView{Leader: 2, LeaderEpoch: 5, ZkVersion: 0, ControllerEpoch: 0, ISR: []int32{2, 3}, Replicas: []int32{1, 2, 3}}
		if !slices.Equal(got.ISR, want.ISR) || got.Leader != want.Leader || got.LeaderEpoch != want.LeaderEpoch || got.IsNew {
			t.Errorf("LeaderAndIsr for old-0 to %d = %+v, want %+v", id, got, want)
		}
	}
	fresh := kafkazk.TopicPartition{Topic: "fresh", Partition: 0}
	if got := h.rawState("fresh", 0); got != `{"controller_epoch":1,"leader":3,"version":1,"leader_epoch":0,"isr":[3,1]}` {
		t.Errorf("fresh-0 state %s", got)
	}
	for _, id := range []int32{1, 3} {
		if v := lai[id][fresh]; !v.IsNew || v.Leader != 3 {
			t.Errorf("LeaderAndIsr for fresh-0 to %d = %+v", id, v)
		}
	}
	if _, ok := lai[2][fresh]; ok {
		t.Error("broker 2 hosts no replica of fresh-0 but got its LeaderAndIsr")
	}
	// LeaderAndIsr carries the request header fields Kafka 3.9 sends.
	for _, s := range sent {
		if r, ok := s.Req.(*kmsg.LeaderAndISRRequest); ok {
			if r.Version != 7 || r.ControllerID != 1 || r.ControllerEpoch != 1 || r.BrokerEpoch != h.c.ctx.brokers[s.Broker].Epoch {
				t.Errorf("LeaderAndIsr header to %d: v%d controller %d epoch %d brokerEpoch %d", s.Broker, r.Version, r.ControllerID, r.ControllerEpoch, r.BrokerEpoch)
			}
			for _, ts := range r.TopicStates {
				if ts.TopicID != h.c.ctx.topicIDs[ts.Topic] || ts.TopicID == ([16]byte{}) {
					t.Errorf("LeaderAndIsr topic %s without its id", ts.Topic)
				}
			}
			if len(r.LiveLeaders) == 0 || r.LiveLeaders[0].Host == "" || r.LiveLeaders[0].Port != 9092 {
				t.Errorf("LiveLeaders %+v", r.LiveLeaders)
			}
		}
	}
	parts, _ := controllertest.UpdateMetadatas(sent)
	if v := parts[2][fresh]; v.Leader != 3 {
		t.Errorf("UpdateMetadata to 2 for fresh-0: %+v", v)
	}
}

// A topic znode without topic_id (written by an older tool) gets one.
func TestFailoverAddsTopicIDs(t *testing.T) {
	h := newCtlHarness(t, 1)
	zktest.MustCreate(t, h.admin, kafkazk.TopicPath("legacy"), `{"version":2,"partitions":{"0":[1]},"adding_replicas":{},"removing_replicas":{}}`, zkstore.ModePersistent)
	h.becomeController(1)
	data, _, err := h.admin.Get(kafkazk.TopicPath("legacy"))
	if err != nil {
		t.Fatal(err)
	}
	z, err := kafkazk.DecodeTopicZNode(data)
	if err != nil || z.TopicID == ([16]byte{}) || z.Version != 3 {
		t.Fatalf("legacy topic znode after failover: %s (%v)", data, err)
	}
}

// Stale ISR change notifications are deleted at failover.
func TestFailoverDeletesNotifications(t *testing.T) {
	h := newCtlHarness(t, 1)
	if err := kafkazk.WriteIsrChangeNotification(h.admin, []kafkazk.TopicPartition{{Topic: "x", Partition: 0}}); err != nil {
		t.Fatal(err)
	}
	h.becomeController(1)
	kids, _, err := h.admin.Children(kafkazk.IsrChangeNotificationPath)
	if err != nil || len(kids) != 0 {
		t.Fatalf("notifications left: %v %v", kids, err)
	}
}

// A broker that died while no controller was running (it was the controller
// itself) leaves the ISRs when the next controller takes over: its replicas
// go OfflineReplica at failover (KafkaController.onControllerFailover).
func TestFailoverTakesDeadBrokersOutOfIsr(t *testing.T) {
	h := newCtlHarness(t, 2, 3)
	h.createTopic("t", map[int32][]int32{0: {3, 1, 2}})
	if err := kafkazk.CreateRecursive(h.admin, kafkazk.TopicPartitionPath("t", 0)); err != nil {
		t.Fatal(err)
	}
	zktest.MustCreate(t, h.admin, kafkazk.PartitionStatePath("t", 0),
		`{"controller_epoch":1,"leader":3,"version":1,"leader_epoch":0,"isr":[3,1,2]}`, zkstore.ModePersistent)
	h.becomeController(3)
	st, _ := h.state("t", 0)
	if st.Leader != 3 || !slices.Equal(st.ISR, []int32{3, 2}) || st.LeaderEpoch != 1 {
		t.Fatalf("state after failover: %+v, want leader 3, ISR [3 2], leader epoch 1", st)
	}
	lai := controllertest.LeaderAndIsrs(h.ch.Take())
	if v, ok := lai[2][kafkazk.TopicPartition{Topic: "t", Partition: 0}]; !ok || !slices.Equal(v.ISR, []int32{3, 2}) {
		t.Errorf("broker 2 LeaderAndIsr for t-0: %+v (sent: %v)", v, ok)
	}
}
