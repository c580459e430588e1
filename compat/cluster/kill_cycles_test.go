package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

const killCycles = 10

// Issue 4: a follower killed and restarted 10 times under an acks=all
// producer: no acknowledged record lost, replicas identical below the HW.
func TestFollowerKillCycles(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, func(int32) bool { return true })
	var others []int32
	for _, b := range c.Brokers {
		if b.ID != ctrl {
			others = append(others, b.ID)
		}
	}
	// The victim is last in every replica list: never the preferred
	// leader, so every kill hits a follower.
	victim, other := others[0], others[1]
	const topic = "follower-cycles"
	createTopicAssigned(t, c, topic, map[int32][]int32{
		0: {ctrl, other, victim}, 1: {other, ctrl, victim}, 2: {ctrl, other, victim},
	}, minISR2)
	waitFullISR(t, conn, topic, 3, 3)

	p := startProducer(t, c.Addrs(), topic, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := range killCycles {
		time.Sleep(time.Second)
		states := mustStates(t, conn, topic, 3)
		if led := partitionsLedBy(states, victim); len(led) > 0 {
			t.Fatalf("cycle %d: the follower %d leads %v", i, victim, led)
		}
		bounce(t, c, conn, victim)
		waitFullISR(t, conn, topic, 3, 3)
		waitProgress(t, p, 200)
		t.Logf("cycle %d done: %d records acknowledged", i, p.acked.Load())
	}
	stopProducer(t, p)
	verifyNoAckedLoss(t, c, conn, topic, p)
}

// Issue 4: the leader of partition 0 killed and restarted 10 times, so
// leadership (and sometimes the controller) moves across the brokers.
func TestLeaderKillCycles(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	const topic = "leader-cycles"
	createTopic(t, c, topic, 3, 3, minISR2)
	waitFullISR(t, conn, topic, 3, 3)

	p := startProducer(t, c.Addrs(), topic, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	killed := map[int32]int{}
	for i := range killCycles {
		time.Sleep(time.Second)
		s, err := readState(conn, topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Leader < 0 {
			t.Fatalf("cycle %d: partition 0 has no leader: %+v", i, s)
		}
		killed[s.Leader]++
		bounce(t, c, conn, s.Leader)
		waitFullISR(t, conn, topic, 3, 3)
		// The next kill only once producers reached the new leader:
		// killing it before a client could find it would measure the
		// client's metadata back-off, not the broker.
		waitProgress(t, p, 200)
		after, err := readState(conn, topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		if after.LeaderEpoch <= s.LeaderEpoch {
			t.Errorf("cycle %d: leader epoch %d after killing the leader, was %d", i, after.LeaderEpoch, s.LeaderEpoch)
		}
		t.Logf("cycle %d: killed leader %d (epoch %d), now %d (epoch %d); %d records acknowledged",
			i, s.Leader, s.LeaderEpoch, after.Leader, after.LeaderEpoch, p.acked.Load())
	}
	if len(killed) < 2 {
		t.Errorf("leader kills hit only brokers %v; leadership did not move across brokers", killed)
	}
	stopProducer(t, p)
	verifyNoAckedLoss(t, c, conn, topic, p)
}

// bounce SIGKILLs a broker, waits until ZooKeeper has dropped its session
// (a restart before that fails: its registration still exists) and starts
// it again.
func bounce(t *testing.T, c *harness.Cluster, conn *zk.Conn, id int32) {
	t.Helper()
	c.Broker(id).Kill()
	waitUntil(t, sessionTimeout+10*time.Second, fmt.Sprintf("broker %d deregistered", id), func() error {
		ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", id))
		if err != nil {
			return err
		}
		if ok {
			return fmt.Errorf("/brokers/ids/%d still exists", id)
		}
		return nil
	})
	c.Restart(t, c.Broker(id))
}

// waitProgress waits (bounded) until p has n more acknowledgements.
func waitProgress(t *testing.T, p *producer, n int64) {
	t.Helper()
	target := p.acked.Load() + n
	waitUntil(t, 30*time.Second, "producer progress", func() error {
		if got := p.acked.Load(); got < target {
			return fmt.Errorf("%d acknowledged, waiting for %d", got, target)
		}
		return nil
	})
}

// stopProducer stops p and logs its errors; records that failed were not
// acknowledged, so only the acknowledged ones are checked afterwards.
func stopProducer(t *testing.T, p *producer) {
	t.Helper()
	acked, errs := p.stop(t)
	for text, e := range errs {
		t.Logf("producer error (%d times, retriable %v): %s", e.n, e.retriable, text)
	}
	p.mu.Lock()
	maxGap, gapEnd := p.maxGap, p.gapEnd
	p.mu.Unlock()
	t.Logf("%d records acknowledged; longest time without an acknowledgement %v, ending %s",
		acked, maxGap.Round(time.Millisecond), gapEnd.UTC().Format("15:04:05.000"))
	if acked == 0 {
		t.Fatal("no record acknowledged")
	}
	// A broker failure costs about one session timeout before the new
	// leaders are elected; a producer blocked much longer than that means
	// a partition stayed unavailable.
	if limit := sessionTimeout + 10*time.Second; maxGap > limit {
		t.Errorf("producers got no acknowledgement for %v (until %s), more than %v",
			maxGap.Round(time.Millisecond), gapEnd.UTC().Format("15:04:05.000"), limit)
	}
}
