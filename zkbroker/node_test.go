package zkbroker

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
	"github.com/prometheus/client_golang/prometheus"
)

type testNode struct {
	n      *Node
	zk     zkstore.Client
	reg    *prometheus.Registry
	isr    chan time.Time
	cancel context.CancelFunc
	done   chan error
}

// startNodes runs one Node per id, each on its own session, sharing a
// recording channel and a fake clock.
func startNodes(t *testing.T, h zktest.Harness, ch controller.BrokerChannel, clock *atomic.Int64, ids ...int32) map[int32]*testNode {
	t.Helper()
	out := map[int32]*testNode{}
	for _, id := range ids {
		reg := prometheus.NewRegistry()
		tn := &testNode{zk: h.Connect(t), reg: reg, isr: make(chan time.Time), done: make(chan error, 1)}
		n, err := New(Config{
			BrokerID:                  id,
			ZooKeeperConnect:          "unused",
			InterBrokerListener:       "PLAINTEXT",
			Endpoints:                 []Endpoint{{Listener: "PLAINTEXT", Host: "127.0.0.1", Port: 9092 + id, SecurityProtocol: "PLAINTEXT"}},
			Registerer:                reg,
			BrokerChannel:             ch,
			Now:                       func() time.Time { return time.UnixMilli(clock.Load()) },
			IsrChangePropagationTicks: tn.isr,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		tn.n = n
		ctx, cancel := context.WithCancel(context.Background())
		tn.cancel = cancel
		go func() { tn.done <- n.run(ctx, tn.zk) }()
		t.Cleanup(tn.stop)
		out[id] = tn
	}
	return out
}

func (tn *testNode) stop() {
	if tn.cancel == nil {
		return
	}
	tn.cancel()
	tn.cancel = nil
	select {
	case <-tn.done:
	case <-time.After(10 * time.Second):
		panic("node did not stop")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// partitionState reads a partition's state znode and its version.
func partitionState(zk zkstore.Client, topic string, p int32) (kafkazk.PartitionStateZNode, int32, bool) {
	data, st, err := zk.Get(kafkazk.PartitionStatePath(topic, p))
	if err != nil {
		return kafkazk.PartitionStateZNode{}, 0, false
	}
	z, err := kafkazk.DecodePartitionStateZNode(data)
	return z, st.Version, err == nil
}

// updateMetadataIsrs counts the UpdateMetadata requests sent so far that
// carry exactly isr for tp, or 0 if any sent one carries another.
func updateMetadataIsrs(ch *controllertest.RecordingChannel, tp kafkazk.TopicPartition, isr []int32) int {
	ch.Mu.Lock()
	sent := slices.Clone(ch.Sent)
	ch.Mu.Unlock()
	parts, _ := controllertest.UpdateMetadatas(sent)
	for _, p := range parts {
		if u, ok := p[tp]; !ok || !slices.Equal(u.ISR, isr) {
			return 0
		}
	}
	return len(parts)
}

// startCluster runs brokers 1, 2 and 3 on a fake clock and waits for one
// of them to become controller.
func startCluster(t *testing.T, h zktest.Harness) (nodes map[int32]*testNode, ch *controllertest.RecordingChannel, ctl *testNode, clock *atomic.Int64) {
	t.Helper()
	clock = &atomic.Int64{}
	clock.Store(1732000000000)
	ch = &controllertest.RecordingChannel{}
	nodes = startNodes(t, h, ch, clock, 1, 2, 3)
	waitUntil(t, "a controller", func() bool { return controllerOf(nodes) != nil })
	return nodes, ch, controllerOf(nodes), clock
}

func controllerOf(nodes map[int32]*testNode) *testNode {
	for _, tn := range nodes {
		if tn.cancel != nil && tn.n.IsController() {
			return tn
		}
	}
	return nil
}

// Three brokers: one becomes controller, topics are created through it,
// a leader's ISR change reaches the controller through the propagation
// task, controlled shutdown and failover of the controller work.
func TestNodesEndToEnd(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		nodes, ch, ctl, clock := startCluster(t, h)
		for _, tn := range nodes {
			waitUntil(t, "everyone knows the controller", func() bool { return tn.n.ControllerID() == ctl.n.cfg.BrokerID })
			if tn.n.ClusterID() == "" || tn.n.BrokerEpoch() <= 0 {
				t.Errorf("broker %d: cluster id %q epoch %d", tn.n.cfg.BrokerID, tn.n.ClusterID(), tn.n.BrokerEpoch())
			}
		}
		waitUntil(t, "ActiveControllerCount 1", func() bool {
			return gauge(t, ctl.reg, "kafka_controller_kafkacontroller_activecontrollercount") == 1
		})
		if ctl.n.ControllerEpoch() != 1 {
			t.Errorf("controller epoch %d", ctl.n.ControllerEpoch())
		}

		id, err := ctl.n.CreateTopic("orders", 3, 3, nil, nil, false)
		if err != nil || id == ([16]byte{}) {
			t.Fatalf("CreateTopic: %v", err)
		}
		admin := h.Connect(t)
		state := func(p int32) (kafkazk.PartitionStateZNode, int32, bool) { return partitionState(admin, "orders", p) }
		waitUntil(t, "partition states", func() bool {
			for p := int32(0); p < 3; p++ {
				if _, _, ok := state(p); !ok {
					return false
				}
			}
			return true
		})
		waitUntil(t, "global partition count", func() bool {
			return gauge(t, ctl.reg, "kafka_controller_kafkacontroller_globalpartitioncount") == 3
		})

		// The leader of orders-0 shrinks its ISR and announces it.
		s, v, _ := state(0)
		leader := nodes[s.Leader]
		shrunk := slices.DeleteFunc(slices.Clone(s.ISR), func(r int32) bool { return r != s.Leader && r == s.ISR[len(s.ISR)-1] })
		if _, err := leader.n.UpdateIsr("orders", 0, kafkazk.LeaderAndIsr{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: shrunk, ControllerEpoch: s.ControllerEpoch}, v); err != nil {
			t.Fatal(err)
		}
		leader.n.RecordIsrChange("orders", 0)
		clock.Add(6000)
		leader.isr <- time.Now()
		waitUntil(t, "UpdateMetadata with the shrunk ISR", func() bool {
			return updateMetadataIsrs(ch, kafkazk.TopicPartition{Topic: "orders", Partition: 0}, shrunk) == 3
		})
		waitUntil(t, "notification deleted", func() bool {
			kids, _, err := admin.Children(kafkazk.IsrChangeNotificationPath)
			return err == nil && len(kids) == 0
		})

		// Controlled shutdown of a broker that is not the controller.
		var victim int32
		for id := range nodes {
			if id != ctl.n.cfg.BrokerID {
				victim = id
				break
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		remaining, err := ctl.n.ControlledShutdown(ctx, victim, nodes[victim].n.BrokerEpoch())
		if err != nil || len(remaining) != 0 {
			t.Fatalf("ControlledShutdown: %v %v", remaining, err)
		}
		for p := int32(0); p < 3; p++ {
			if s, _, _ := state(p); s.Leader == victim || slices.Contains(s.ISR, victim) {
				t.Errorf("orders-%d still has %d: %+v", p, victim, s)
			}
		}
		nodes[victim].stop()
		nodes[victim].zk.Close()

		// The controller dies: the survivor takes over with epoch 2.
		ctl.stop()
		ctl.zk.Close()
		waitUntil(t, "a new controller", func() bool {
			c := controllerOf(nodes)
			return c != nil && c != ctl
		})
		next := controllerOf(nodes)
		if next.n.ControllerEpoch() != 2 {
			t.Errorf("new controller epoch %d", next.n.ControllerEpoch())
		}
		if _, err := next.n.CreateTopic("after", 1, 1, nil, nil, false); err != nil {
			t.Errorf("CreateTopic on the new controller: %v", err)
		}
		res, err := next.n.ElectLeaders(ctx, controller.ElectPreferred, nil)
		if err != nil || len(res) == 0 {
			t.Errorf("ElectLeaders: %v %v", res, err)
		}
		if _, err := next.n.ListPartitionReassignments(ctx, nil); err != nil {
			t.Errorf("ListPartitionReassignments: %v", err)
		}
		if _, err := ctl.n.ElectLeaders(ctx, controller.ElectPreferred, nil); err == nil {
			t.Error("a stopped node answered as controller")
		}
	})
}

// The controller's session expires: it stops acting as controller, the
// broker registers again on its new session and the election runs again
// (here it wins again, with the next epoch).
func TestNodeResignsOnSessionExpiry(t *testing.T) {
	z := zkstore.NewMem()
	h := zktest.Harness{Name: "fake", Connect: func(t *testing.T) zkstore.Client {
		c := z.Connect()
		t.Cleanup(c.Close)
		return c
	}}
	var clock atomic.Int64
	clock.Store(1732000000000)
	nodes := startNodes(t, h, &controllertest.RecordingChannel{}, &clock, 1)
	tn := nodes[1]
	waitUntil(t, "controller", func() bool { return tn.n.IsController() })
	epoch := tn.n.BrokerEpoch()
	waitUntil(t, "failover done", func() bool {
		return gauge(t, tn.reg, "kafka_controller_kafkacontroller_activecontrollercount") == 1
	})
	z.Expire(tn.zk.(*zkstore.MemConn))
	waitUntil(t, "controller again with epoch 2", func() bool {
		return tn.n.IsController() && tn.n.ControllerEpoch() == 2 && tn.n.BrokerEpoch() > epoch
	})
	waitUntil(t, "gauge follows the new tenure", func() bool {
		return gauge(t, tn.reg, "kafka_controller_kafkacontroller_controllerepoch") == 2
	})
}

// A leader's ISR shrink written past the controller is announced at once,
// not on the propagation task's schedule (no tick is sent here): the
// controller re-reads the state znode, tells every broker, and takes the
// leader's next AlterPartition against the version the leader wrote.
func TestIsrShrinkPastControllerReachesController(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		nodes, ch, ctl, _ := startCluster(t, h)
		// Until the controller has seen all three registrations it
		// refuses a replication factor of 3.
		waitUntil(t, "the topic created", func() bool {
			_, err := ctl.n.CreateTopic("orders", 1, 3, nil, nil, false)
			return err == nil
		})
		admin := h.Connect(t)
		state := func() (kafkazk.PartitionStateZNode, int32, bool) { return partitionState(admin, "orders", 0) }
		waitUntil(t, "the partition state", func() bool { _, _, ok := state(); return ok })
		s, v, _ := state()
		leader := nodes[s.Leader]
		waitUntil(t, "the leader knows the controller", func() bool { return leader.n.ControllerID() == ctl.n.cfg.BrokerID })
		removed := s.ISR[len(s.ISR)-1]
		if removed == s.Leader {
			removed = s.ISR[0]
		}
		shrunk := slices.DeleteFunc(slices.Clone(s.ISR), func(r int32) bool { return r == removed })
		nv, err := leader.n.ShrinkIsrPastController("orders", 0, kafkazk.LeaderAndIsr{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: shrunk, ControllerEpoch: s.ControllerEpoch}, v)
		if err != nil || nv != v+1 {
			t.Fatalf("ShrinkIsrPastController: version %d, %v", nv, err)
		}
		tp := kafkazk.TopicPartition{Topic: "orders", Partition: 0}
		waitUntil(t, "UpdateMetadata with the shrunk ISR", func() bool { return updateMetadataIsrs(ch, tp, shrunk) == 3 })

		// The follower is back: the controller takes the expansion at the
		// version the leader wrote.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := ctl.n.AlterPartition(ctx, s.Leader, leader.n.BrokerEpoch(), 1, []controller.AlterPartitionItem{{
			Topic: "orders", Partition: 0, LeaderEpoch: s.LeaderEpoch, NewIsr: append(slices.Clone(shrunk), removed), PartitionEpoch: nv,
		}})
		if err != nil || len(res) != 1 || res[0].Err != nil {
			t.Fatalf("AlterPartition after the shrink: %+v %v", res, err)
		}
		if got, gv, _ := state(); !slices.Equal(got.ISR, append(slices.Clone(shrunk), removed)) || gv != nv+1 {
			t.Errorf("state after the expansion: %+v at version %d", got, gv)
		}
	})
}
