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
