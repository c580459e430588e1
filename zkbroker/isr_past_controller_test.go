package zkbroker

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// A leader's ISR shrink written past the controller is announced at once,
// not on the propagation task's schedule (no tick is sent here): the
// controller re-reads the state znode, tells every broker, and takes the
// leader's next AlterPartition against the version the leader wrote.
func TestIsrShrinkPastControllerReachesController(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		var clock atomic.Int64
		clock.Store(1732000000000)
		ch := &controllertest.RecordingChannel{}
		nodes := startNodes(t, h, ch, &clock, 1, 2, 3)
		waitUntil(t, "a controller", func() bool { return controllerOf(nodes) != nil })
		ctl := controllerOf(nodes)
		// Until the controller has seen all three registrations it
		// refuses a replication factor of 3.
		waitUntil(t, "the topic created", func() bool {
			_, err := ctl.n.CreateTopic("orders", 1, 3, nil, nil, false)
			return err == nil
		})
		admin := h.Connect(t)
		state := func() (kafkazk.PartitionStateZNode, int32, bool) {
			data, st, err := admin.Get(kafkazk.PartitionStatePath("orders", 0))
			if err != nil {
				return kafkazk.PartitionStateZNode{}, 0, false
			}
			z, err := kafkazk.DecodePartitionStateZNode(data)
			return z, st.Version, err == nil
		}
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
		waitUntil(t, "UpdateMetadata with the shrunk ISR", func() bool {
			ch.Mu.Lock()
			sent := slices.Clone(ch.Sent)
			ch.Mu.Unlock()
			parts, _ := controllertest.UpdateMetadatas(sent)
			for _, p := range parts {
				if u, ok := p[tp]; ok && slices.Equal(u.ISR, shrunk) {
					return true
				}
			}
			return false
		})

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
