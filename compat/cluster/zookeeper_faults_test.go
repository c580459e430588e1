package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/kbroker/kbroker/zkbroker"
	"github.com/kbroker/kbroker/zkstore"
)

// Issue 13, ZooKeeper trouble: ZooKeeper paused past the session timeout
// (every broker's session expires at once), ZooKeeper restarted, and one
// broker's session expired alone. In each, ZooKeeper + 3 brokers, rf 3,
// min.insync.replicas 2 and an idempotent acks=all producer throughout;
// afterwards the brokers are registered again, the controller was elected
// exactly as often as the fault requires, the state znodes are sound (leader
// in the ISR, ISR within the replicas, leader epochs never lower than
// before), every ISR is full, nothing acknowledged is lost and the replicas
// agree below the HW.

const zkFaultTopic, zkFaultPartitions = "zk-faults", 3

// zkFaultCluster starts the cluster, the topic and the producer.
func zkFaultCluster(t *testing.T) (*harness.Cluster, *zk.Conn, *chaosProducer) {
	t.Helper()
	c, conn := startWithTopic(t, zkFaultTopic, zkFaultPartitions)
	waitFullISR(t, conn, zkFaultTopic, zkFaultPartitions, 3)
	p := startChaosProducer(t, c.Addrs(), "zf", zkFaultPartitions, chaosAcksAllOpts(zkFaultTopic)...)
	time.Sleep(2 * time.Second)
	return c, conn, p
}

// zkBaseline is what a fault is judged against: the controller epoch,
// the brokers' registrations and the partitions' states.
func zkBaseline(t *testing.T, c *harness.Cluster, conn *zk.Conn) (int32, map[int32]int64, map[int32]partitionState) {
	t.Helper()
	epoch, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	return epoch, registrations(t, conn, c), mustStates(t, conn, zkFaultTopic, zkFaultPartitions)
}

// registrations returns each broker's registration czxid (its broker
// epoch).
func registrations(t *testing.T, conn *zk.Conn, c *harness.Cluster) map[int32]int64 {
	t.Helper()
	out := map[int32]int64{}
	for _, b := range c.Brokers {
		ok, st, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", b.ID))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out[b.ID] = st.Czxid
		}
	}
	return out
}

// waitReregistered waits until every broker in ids is registered with a
// broker epoch other than the one in before.
func waitReregistered(t *testing.T, conn *zk.Conn, ids []int32, before map[int32]int64, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, fmt.Sprintf("brokers %v registered again", ids), func() error {
		for _, id := range ids {
			ok, st, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", id))
			if err != nil {
				return err
			}
			if !ok || st.Czxid == before[id] {
				return fmt.Errorf("/brokers/ids/%d: exists %v, czxid %d (before %d)", id, ok, st.Czxid, before[id])
			}
		}
		return nil
	})
}

// checkStatesSound checks every partition's state znode against its
// assignment and the leader epochs seen before the fault.
func checkStatesSound(t *testing.T, conn *zk.Conn, before map[int32]partitionState) {
	t.Helper()
	assignment, err := topicAssignment(conn, zkFaultTopic)
	if err != nil {
		t.Fatal(err)
	}
	for part, s := range mustStates(t, conn, zkFaultTopic, zkFaultPartitions) {
		if !slices.Contains(s.ISR, s.Leader) {
			t.Errorf("partition %d: leader %d not in its ISR %v", part, s.Leader, s.ISR)
		}
		for _, r := range s.ISR {
			if !slices.Contains(assignment[part], r) {
				t.Errorf("partition %d: ISR member %d not a replica %v", part, r, assignment[part])
			}
		}
		if s.LeaderEpoch < before[part].LeaderEpoch {
			t.Errorf("partition %d: leader epoch %d below %d before the fault", part, s.LeaderEpoch, before[part].LeaderEpoch)
		}
	}
}

// ackedDuring counts the producer's acknowledgements over a span of
// seconds.
func (p *chaosProducer) ackedDuring(from, to time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, secs := range p.ackedSeconds {
		for s := from.Unix(); s <= to.Unix(); s++ {
			if secs[s] {
				n++
			}
		}
	}
	return n
}

// ZooKeeper stops (SIGSTOP) for longer than the session timeout: every
// session expires when it comes back. The brokers keep serving meanwhile
// (nothing needs ZooKeeper while the ISRs stay whole), register again with
// new broker epochs, and exactly one new controller is elected.
func TestZooKeeperPausedPastSessionTimeout(t *testing.T) {
	c, conn, p := zkFaultCluster(t)
	epoch, regs, before := zkBaseline(t, c, conn)

	paused := time.Now()
	if err := c.ZK.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(sessionTimeout + 3*time.Second)
	if err := c.ZK.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	if n := p.ackedDuring(paused.Add(time.Second), resumed.Add(-time.Second)); n == 0 {
		t.Errorf("no write acknowledged while ZooKeeper was paused (%v)", resumed.Sub(paused).Round(time.Millisecond))
	}

	var ids []int32
	for _, b := range c.Brokers {
		ids = append(ids, b.ID)
	}
	waitReregistered(t, conn, ids, regs, 30*time.Second)
	waitController(t, conn, 30*time.Second, anyBroker)
	waitFullISR(t, conn, zkFaultTopic, zkFaultPartitions, 3)
	// Settled: one election for the one loss of every session.
	time.Sleep(2 * time.Second)
	if e, err := controllerEpoch(conn); err != nil || e != epoch+1 {
		t.Errorf("controller epoch %d after the pause, was %d: want exactly one election (%v)", e, epoch, err)
	}
	checkStatesSound(t, conn, before)
	t.Logf("ZooKeeper paused %v; every broker registered again %v after it resumed",
		resumed.Sub(paused).Round(time.Millisecond), time.Since(resumed).Round(time.Millisecond))
	acked := p.stop(t)
	c.WaitReady(t)
	finishChaos(t, c, conn, zkFaultTopic, zkFaultPartitions, acked)
}

// ZooKeeper is SIGKILLed and started again on the same data dir within the
// session timeout: the sessions survive (ZooKeeper restores them from its
// log), nobody re-registers, no new controller is elected, and writes go
// on throughout.
func TestZooKeeperRestarted(t *testing.T) {
	c, conn, p := zkFaultCluster(t)
	epoch, regs, before := zkBaseline(t, c, conn)

	killed := time.Now()
	if err := c.ZK.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	c.ZK.Start(t)
	started := time.Now()
	t.Logf("ZooKeeper down for %v", started.Sub(killed).Round(time.Millisecond))
	// The test's own connection reconnects like the brokers'.
	waitUntil(t, 30*time.Second, "ZooKeeper answers the test again", func() error {
		_, _, err := conn.Exists("/brokers/ids")
		return err
	})
	time.Sleep(sessionTimeout)
	if got := registrations(t, conn, c); !maps.Equal(got, regs) {
		t.Errorf("registrations after the restart %v, before %v: a session did not survive", got, regs)
	}
	if e, err := controllerEpoch(conn); err != nil || e != epoch {
		t.Errorf("controller epoch %d after the restart, was %d: want no election (%v)", e, epoch, err)
	}
	if n := p.ackedDuring(started, time.Now()); n == 0 {
		t.Error("no write acknowledged after ZooKeeper came back")
	}
	checkStatesSound(t, conn, before)
	acked := p.stop(t)
	c.WaitReady(t)
	finishChaos(t, c, conn, zkFaultTopic, zkFaultPartitions, acked)
}

// One broker's session ends alone (closed from outside with the
// credentials the broker keeps in its log dir, which the broker sees as an
// expiry): the broker registers again with a new epoch, the controller
// handles the bounce and the broker rejoins every ISR; when it was the
// controller, exactly one election follows.
func TestOneBrokerSessionExpired(t *testing.T) {
	for _, role := range []string{"controller", "leader"} {
		t.Run(role, func(t *testing.T) {
			c, conn, p := zkFaultCluster(t)
			epoch, regs, before := zkBaseline(t, c, conn)
			ctrl, err := controllerID(conn)
			if err != nil {
				t.Fatal(err)
			}
			victim := ctrl
			if role == "leader" {
				victim = leaderNotController(t, c, before, ctrl)
			}
			cred, ok, err := zkbroker.LoadSessionFile(c.Broker(victim).LogDir)
			if err != nil || !ok {
				t.Fatalf("broker %d's session file: ok %v, %v", victim, ok, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			closed, err := zkstore.CloseSession(ctx, c.ZK.Addr, cred, sessionTimeout)
			cancel()
			if err != nil || !closed {
				t.Fatalf("closing broker %d's session: closed %v, %v", victim, closed, err)
			}
			expired := time.Now()
			waitReregistered(t, conn, []int32{victim}, regs, 30*time.Second)
			t.Logf("broker %d (%s) registered again %v after its session ended", victim, role, time.Since(expired).Round(time.Millisecond))
			waitController(t, conn, 30*time.Second, anyBroker)
			waitFullISR(t, conn, zkFaultTopic, zkFaultPartitions, 3)
			t.Logf("every ISR full %v after the session ended", time.Since(expired).Round(time.Millisecond))
			time.Sleep(2 * time.Second)
			want := epoch
			if role == "controller" {
				want = epoch + 1
			}
			if e, err := controllerEpoch(conn); err != nil || e != want {
				t.Errorf("controller epoch %d, was %d, want %d (%v)", e, epoch, want, err)
			}
			for _, b := range c.Brokers {
				if !b.Running() {
					t.Errorf("broker %d exited", b.ID)
				}
			}
			checkStatesSound(t, conn, before)
			acked := p.stop(t)
			c.WaitReady(t)
			finishChaos(t, c, conn, zkFaultTopic, zkFaultPartitions, acked)
		})
	}
}
