package controller

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// ctlHarness is a fake ensemble with registered brokers, each on its own
// session, and an admin session for the test's own reads and writes.
type ctlHarness struct {
	t       *testing.T
	z       *zkstore.Mem
	admin   zkstore.Client
	brokers map[int32]*zkstore.MemConn
	ch      *controllertest.RecordingChannel
	cfg     Config
	c       *Controller
}

func newCtlHarness(t *testing.T, ids ...int32) *ctlHarness {
	t.Helper()
	z := zkstore.NewMem()
	h := &ctlHarness{t: t, z: z, admin: z.Connect(), brokers: map[int32]*zkstore.MemConn{}, ch: &controllertest.RecordingChannel{}}
	if err := kafkazk.CreateTopLevelPaths(h.admin); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		h.startBroker(id)
	}
	seq := byte(0)
	h.cfg = Config{InterBrokerListener: "PLAINTEXT", ImbalancePerBrokerPct: 10,
		NewTopicID: func() [16]byte { seq++; return [16]byte{0: 0xAB, 15: seq} }}
	return h
}

func (h *ctlHarness) startBroker(id int32) {
	h.t.Helper()
	c := h.z.Connect()
	reg := testRegistration(fmt.Sprintf("kb%d", id))
	reg.Rack = fmt.Sprintf("r%d", id%2)
	if _, err := kafkazk.RegisterBroker(c, id, reg); err != nil {
		h.t.Fatal(err)
	}
	h.brokers[id] = c
}

// killBroker ends the broker's session: its registration vanishes.
func (h *ctlHarness) killBroker(id int32) {
	h.brokers[id].Close()
	delete(h.brokers, id)
}

// becomeController elects id and runs failover to idle.
func (h *ctlHarness) becomeController(id int32) *Controller {
	h.t.Helper()
	st, err := kafkazk.ElectController(h.brokers[id], id, 1732000000000)
	if err != nil || !st.IsController {
		h.t.Fatalf("election: %+v %v", st, err)
	}
	cfg := h.cfg
	cfg.BrokerID = id
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h.c = New(h.brokers[id], cfg, st, h.ch, true, log, nil)
	h.run()
	return h.c
}

func (h *ctlHarness) run() {
	h.t.Helper()
	if err := h.c.runUntilIdle(); err != nil {
		h.t.Fatalf("controller: %v", err)
	}
}

func (h *ctlHarness) createTopic(name string, assignment map[int32][]int32) {
	h.t.Helper()
	if _, err := kafkazk.CreateTopic(h.admin, name, -1, -1, assignment, nil, false, nil, h.cfg.NewTopicID); err != nil {
		h.t.Fatal(err)
	}
}

// updateIsr is the partition leader's conditional ISR write; the test
// stops if it fails.
func (h *ctlHarness) updateIsr(tp kafkazk.TopicPartition, s kafkazk.LeaderAndIsr, expectedVersion int32) {
	h.t.Helper()
	if _, err := kafkazk.UpdateIsr(h.admin, tp, s, expectedVersion); err != nil {
		h.t.Fatal(err)
	}
}

// newLoneLeaderHarness: brokers 1-3, controller 3, and orders-0 on [1,2]
// whose leader 1 has shrunk the ISR to itself.
func newLoneLeaderHarness(t *testing.T) (*ctlHarness, *Controller) {
	t.Helper()
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	h.updateIsr(kafkazk.TopicPartition{Topic: "orders", Partition: 0}, kafkazk.LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}, 0)
	return h, c
}

func (h *ctlHarness) state(topic string, p int32) (kafkazk.PartitionStateZNode, int32) {
	h.t.Helper()
	data, st, err := h.admin.Get(kafkazk.PartitionStatePath(topic, p))
	if err != nil {
		h.t.Fatalf("state of %s-%d: %v", topic, p, err)
	}
	z, err := kafkazk.DecodePartitionStateZNode(data)
	if err != nil {
		h.t.Fatal(err)
	}
	return z, st.Version
}

func (h *ctlHarness) rawState(topic string, p int32) string {
	h.t.Helper()
	data, _, err := h.admin.Get(kafkazk.PartitionStatePath(topic, p))
	if err != nil {
		h.t.Fatalf("state of %s-%d: %v", topic, p, err)
	}
	return string(data)
}

// Request views for assertions.

func brokersOf[V any](m map[int32]V) []int32 {
	var ids []int32
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// raceZK runs before ahead of every Multi, to interleave another client's
// write between the controller's read and its write.
type raceZK struct {
	zkstore.Client
	before func(ops []zkstore.Op)
}

func (r *raceZK) Multi(ops ...zkstore.Op) ([]zkstore.OpResult, error) {
	r.before(ops)
	return r.Client.Multi(ops...)
}

// testRegistration is a 3.9 broker's registration on host:9092.
func testRegistration(host string) kafkazk.BrokerZNode {
	return kafkazk.BrokerZNode{
		Version:   5,
		Endpoints: []kafkazk.Endpoint{{Listener: "PLAINTEXT", Host: host, Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		JmxPort:   -1,
		Timestamp: 1732000000000,
		Features:  map[string]kafkazk.FeatureRange{"metadata.version": {Min: 1, Max: 21}},
	}
}
