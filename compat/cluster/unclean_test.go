package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 3 acceptance: a partition whose whole ISR is dead stays offline
// with unclean.leader.election.enable=false; with the topic override set to
// true it comes back, led by the remaining (out-of-sync) replica.
func TestUncleanElection(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	// The two replicas are the non-controller brokers, so the controller
	// stays alive to make (or refuse) the election.
	var leader, follower int32 = -1, -1
	for _, b := range c.Brokers {
		if b.ID == ctrl {
			continue
		}
		if leader < 0 {
			leader = b.ID
		} else {
			follower = b.ID
		}
	}
	const topic = "unclean"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {leader, follower}},
		map[string]*string{"unclean.leader.election.enable": strp("false")})
	waitFullISR(t, conn, topic, 1, 2)
	produceN(t, newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic)), "before", 20)

	// Follower first: the controller drops it from the ISR.
	c.Broker(follower).Kill()
	waitUntil(t, sessionTimeout+15*time.Second, "ISR shrinks to the leader", func() error {
		s, err := readState(conn, topic, 0)
		if err != nil {
			return err
		}
		if s.Leader != leader || fmt.Sprint(s.ISR) != fmt.Sprint([]int32{leader}) {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	// Then the last ISR member: the partition goes offline, the ISR keeps
	// its last member (Kafka never empties an ISR: the last member is the
	// only replica known to hold every committed record).
	c.Broker(leader).Kill()
	var offline partitionState
	waitUntil(t, sessionTimeout+15*time.Second, "partition offline", func() error {
		var err error
		if offline, err = readState(conn, topic, 0); err != nil {
			return err
		}
		if offline.Leader != -1 {
			return fmt.Errorf("state %+v", offline)
		}
		return nil
	})
	if fmt.Sprint(offline.ISR) != fmt.Sprint([]int32{leader}) {
		t.Errorf("offline partition's ISR %v, want the last member [%d]", offline.ISR, leader)
	}

	// The out-of-sync replica comes back: with unclean election off it
	// must not become leader.
	c.Restart(t, c.Broker(follower))
	stayedOffline := time.Now().Add(8 * time.Second)
	for time.Now().Before(stayedOffline) {
		s, err := readState(conn, topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Leader != -1 {
			t.Fatalf("partition got leader %d with unclean.leader.election.enable=false: %+v", s.Leader, s)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, id := range []int32{ctrl, follower} {
		v, err := metadataView(c.Broker(id).Addr, topic)
		if err != nil {
			t.Fatalf("Metadata from %d: %v", id, err)
		}
		if v[0].Leader != -1 {
			t.Errorf("broker %d Metadata shows leader %d for the offline partition", id, v[0].Leader)
		}
	}

	// Turn the topic override on (through the controller, as kadm
	// routes it) and the remaining replica is elected.
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	resps, err := adm.AlterTopicConfigs(testCtx(t, 30*time.Second),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: strp("true")}}, topic)
	if err == nil {
		for _, r := range resps {
			if r.Err != nil {
				err = fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
			}
		}
	}
	if err != nil {
		t.Fatalf("IncrementalAlterConfigs unclean.leader.election.enable=true: %v", err)
	}
	waitUntil(t, 20*time.Second, "unclean election of the remaining replica", func() error {
		s, err := readState(conn, topic, 0)
		if err != nil {
			return err
		}
		if s.Leader != follower || s.LeaderEpoch <= offline.LeaderEpoch {
			return fmt.Errorf("state %+v (offline epoch %d)", s, offline.LeaderEpoch)
		}
		return checkMetadataMatchesState(c, conn, topic, 1)
	})
	produceN(t, newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic)), "after", 10)
	consumeAll(t, c.Addrs(), topic, 10, 30*time.Second)
}
