package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func (r *recordingChannel) Send(_ context.Context, broker int32, req kmsg.Request) (kmsg.Response, error) {
	r.mu.Lock()
	r.sent = append(r.sent, sentRequest{broker, req})
	respond := r.respond
	r.mu.Unlock()
	if respond != nil {
		if resp := respond(broker, req); resp != nil {
			return resp, nil
		}
	}
	return successResponse(req), nil
}

// take returns and forgets what was sent.
func (r *recordingChannel) take() []sentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// ctlHarness is a fake ensemble with registered brokers, each on its own
// session, and an admin session for the test's own reads and writes.
type ctlHarness struct {
	t       *testing.T
	z       *memZK
	admin   zkClient
	brokers map[int32]*memConn
	ch      *recordingChannel
	cfg     controllerConfig
	c       *kafkaController
}

func newCtlHarness(t *testing.T, ids ...int32) *ctlHarness {
	t.Helper()
	z := newMemZK()
	h := &ctlHarness{t: t, z: z, admin: z.connect(), brokers: map[int32]*memConn{}, ch: &recordingChannel{}}
	if err := createTopLevelPaths(h.admin); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		h.startBroker(id)
	}
	seq := byte(0)
	h.cfg = controllerConfig{interBrokerListener: "PLAINTEXT", imbalancePerBrokerPct: 10,
		newTopicID: func() [16]byte { seq++; return [16]byte{0: 0xAB, 15: seq} }}
	return h
}

func (h *ctlHarness) startBroker(id int32) {
	h.t.Helper()
	c := h.z.connect()
	reg := testRegistration(fmt.Sprintf("kb%d", id))
	reg.Rack = fmt.Sprintf("r%d", id%2)
	if _, err := registerBroker(c, id, reg); err != nil {
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
func (h *ctlHarness) becomeController(id int32) *kafkaController {
	h.t.Helper()
	st, err := electController(h.brokers[id], id, 1732000000000)
	if err != nil || !st.IsController {
		h.t.Fatalf("election: %+v %v", st, err)
	}
	cfg := h.cfg
	cfg.brokerID = id
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h.c = newKafkaController(h.brokers[id], cfg, st, h.ch, true, log, nil)
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
	if _, err := createTopic(h.admin, name, -1, -1, assignment, nil, false, nil, h.cfg.newTopicID); err != nil {
		h.t.Fatal(err)
	}
}

// updateIsr is the partition leader's conditional ISR write; the test
// stops if it fails.
func (h *ctlHarness) updateIsr(tp topicPartition, s LeaderAndIsr, expectedVersion int32) {
	h.t.Helper()
	if _, err := updateIsr(h.admin, tp, s, expectedVersion); err != nil {
		h.t.Fatal(err)
	}
}

// newLoneLeaderHarness: brokers 1-3, controller 3, and orders-0 on [1,2]
// whose leader 1 has shrunk the ISR to itself.
func newLoneLeaderHarness(t *testing.T) (*ctlHarness, *kafkaController) {
	t.Helper()
	h := newCtlHarness(t, 1, 2, 3)
	c := h.becomeController(3)
	h.createTopic("orders", map[int32][]int32{0: {1, 2}})
	h.run()
	h.updateIsr(topicPartition{"orders", 0}, LeaderAndIsr{Leader: 1, ISR: []int32{1}, ControllerEpoch: 1}, 0)
	return h, c
}

func (h *ctlHarness) state(topic string, p int32) (partitionStateZNode, int32) {
	h.t.Helper()
	data, st, err := h.admin.Get(partitionStatePath(topic, p))
	if err != nil {
		h.t.Fatalf("state of %s-%d: %v", topic, p, err)
	}
	z, err := decodePartitionStateZNode(data)
	if err != nil {
		h.t.Fatal(err)
	}
	return z, st.Version
}

func (h *ctlHarness) rawState(topic string, p int32) string {
	h.t.Helper()
	data, _, err := h.admin.Get(partitionStatePath(topic, p))
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
	zkClient
	before func(ops []zkOp)
}

func (r *raceZK) Multi(ops ...zkOp) ([]zkOpResult, error) {
	r.before(ops)
	return r.zkClient.Multi(ops...)
}
