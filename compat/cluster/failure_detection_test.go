package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 13, "leadership comes back fast": a SIGKILLed broker that is not
// restarted keeps its ZooKeeper session, and with it its registration and
// (for the controller) /controller, until zookeeper.session.timeout.ms
// runs out — 18 s here, Kafka's default. kbroker does not wait for that:
// the controller and the other brokers probe it, and a port that refuses
// connections is handled as a dead broker (internal/brokerprobe). This test
// measures the time from the SIGKILL to a record produced right after it
// being acknowledged by the partition's new leader, for a partition leader
// and for the controller, and wants both far below the session timeout.
func TestLeaderDeathDetectedBeforeSessionExpiry(t *testing.T) {
	const (
		topic = "death-detect"
		// Far below the 18 s session timeout, with room for a loaded CI
		// machine; about 1-2 s is what it takes on an idle one.
		leaderBudget     = 7 * time.Second
		controllerBudget = 9 * time.Second
	)
	c := harness.StartCluster(t, 3, "zookeeper.session.timeout.ms=18000")
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 15*time.Second, anyBroker)
	rest := otherThan(c, ctrl)
	// Partition 0 led by a plain broker, partition 1 by the controller.
	assignment := map[int32][]int32{
		0: {rest[0], rest[1], ctrl},
		1: {ctrl, rest[0], rest[1]},
	}
	createTopicAssigned(t, c, topic, assignment, minISR2)
	waitFullISR(t, conn, topic, 2, 3)

	p := startChaosProducer(t, c.Addrs(), "dd", 2, chaosAcksAllOpts(topic)...)
	probe := newClient(t, c.Addrs(), chaosAcksAllOpts(topic)...)
	time.Sleep(2 * time.Second)

	// writesBack SIGKILLs victim and returns how long a record produced to
	// partition right after the kill took to be acknowledged.
	writesBack := func(victim int32, partition int32) time.Duration {
		t.Helper()
		c.Broker(victim).Kill()
		killed := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		r := &kgo.Record{Partition: partition, Value: fmt.Appendf(nil, "after-kill-%d", victim)}
		if err := probe.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to partition %d after killing broker %d: %v", partition, victim, err)
		}
		took := time.Since(killed)
		st := mustStates(t, conn, topic, 2)[partition]
		if st.Leader == victim || slices.Contains(st.ISR, victim) {
			t.Errorf("partition %d after broker %d died: %+v", partition, victim, st)
		}
		ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", victim))
		t.Logf("broker %d SIGKILLed: partition %d took a write at offset %d after %v (its registration still exists: %v %v)",
			victim, partition, r.Offset, took.Round(time.Millisecond), ok, err)
		return took
	}

	if took := writesBack(rest[0], 0); took > leaderBudget {
		t.Errorf("partition leader %d: writes refused for %v, budget %v", rest[0], took, leaderBudget)
	}
	restartChecked(t, c, conn, rest[0])
	waitFullISR(t, conn, topic, 2, 3)

	epoch, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	if took := writesBack(ctrl, 1); took > controllerBudget {
		t.Errorf("controller %d: writes refused for %v, budget %v", ctrl, took, controllerBudget)
	}
	next := waitController(t, conn, controllerBudget, func(id int32) bool { return id != ctrl })
	if e, err := controllerEpoch(conn); err != nil || e != epoch+1 {
		t.Errorf("controller epoch %d after the controller died (was %d): %v", e, epoch, err)
	}
	t.Logf("controller %d took over from %d", next, ctrl)
	restartChecked(t, c, conn, ctrl)
	waitFullISR(t, conn, topic, 2, 3)

	acked := p.stop(t)
	c.WaitReady(t)
	finishChaos(t, c, conn, topic, 2, acked)
}

// A paused broker (SIGSTOP: its port still accepts connections, nothing
// answers, its ZooKeeper session lives on) is handled as failed about 2-2.5 s
// into the pause, far below the session timeout: a paused leader by the
// controller's probes; a paused controller by the other brokers, which
// agree (a majority of them) that it does not answer and depose it. Either
// way its partition gets a new leader from the ISR and takes writes from a
// client that was not waiting on the paused broker. Resumed, the broker
// is started up again as a follower and rejoins the ISR, and nothing
// acknowledged is lost.
func TestPausedLeaderFencedBeforeSessionExpiry(t *testing.T) {
	const (
		topic = "pause-detect"
		// Far below the 18 s session timeout, with room for a loaded CI
		// machine; about 2.5-3.5 s is what it takes on an idle one.
		budget = 9 * time.Second
	)
	c := harness.StartCluster(t, 3, "zookeeper.session.timeout.ms=18000")
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 15*time.Second, anyBroker)
	rest := otherThan(c, ctrl)
	// Partition 0 led by a plain broker, partition 1 by the controller.
	createTopicAssigned(t, c, topic, map[int32][]int32{
		0: {rest[0], rest[1], ctrl},
		1: {ctrl, rest[0], rest[1]},
	}, minISR2)
	waitFullISR(t, conn, topic, 2, 3)
	p := startChaosProducer(t, c.Addrs(), "pl", 2, chaosAcksAllOpts(topic)...)
	time.Sleep(2 * time.Second)

	pauseLeader := func(victim, partition int32, live []int32) {
		t.Helper()
		if err := c.Broker(victim).Pause(); err != nil {
			t.Fatal(err)
		}
		paused := time.Now()
		resumed := false
		defer func() {
			if !resumed {
				_ = c.Broker(victim).Resume()
			}
		}()
		waitUntil(t, budget, fmt.Sprintf("a new leader for partition %d of paused broker %d", partition, victim), func() error {
			st, err := readState(conn, topic, partition)
			if err != nil {
				return err
			}
			if st.Leader == victim || slices.Contains(st.ISR, victim) {
				return fmt.Errorf("%+v", st)
			}
			return nil
		})
		moved := time.Since(paused)
		// A client that meets the paused broker only in metadata it no
		// longer gets: every live broker now names the new leader.
		var seeds []string
		for _, id := range live {
			seeds = append(seeds, c.Broker(id).Addr)
		}
		fresh := newClient(t, seeds, chaosAcksAllOpts(topic)...)
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		r := &kgo.Record{Partition: partition, Value: fmt.Appendf(nil, "after-pause-%d", victim)}
		err := fresh.ProduceSync(ctx, r).FirstErr()
		cancel()
		if err != nil {
			t.Fatalf("produce to partition %d after its leader moved: %v", partition, err)
		}
		ok, _, _ := conn.Exists(fmt.Sprintf("/brokers/ids/%d", victim))
		t.Logf("broker %d paused: partition %d's leader moved after %v, a write at offset %d acknowledged after %v (registration still exists: %v)",
			victim, partition, moved.Round(time.Millisecond), r.Offset, time.Since(paused).Round(time.Millisecond), ok)
		if !ok {
			t.Errorf("broker %d's registration is gone: the session expired, the probes did not act", victim)
		}
		if err := c.Broker(victim).Resume(); err != nil {
			t.Fatal(err)
		}
		resumed = true
		waitFullISR(t, conn, topic, 2, 3)
	}

	pauseLeader(rest[0], 0, []int32{rest[1], ctrl})
	epoch, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	pauseLeader(ctrl, 1, rest)
	next := waitController(t, conn, budget, func(id int32) bool { return id != ctrl })
	if e, err := controllerEpoch(conn); err != nil || e != epoch+1 {
		t.Errorf("controller epoch %d after the controller was paused (was %d): %v", e, epoch, err)
	}
	t.Logf("controller %d took over from paused %d", next, ctrl)

	acked := p.stop(t)
	c.WaitReady(t)
	finishChaos(t, c, conn, topic, 2, acked)
}
