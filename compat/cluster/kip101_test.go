package cluster

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 4, KIP-101 end to end: a leader holding records its follower never
// fetched dies; the follower becomes leader and takes new records at the
// same offsets; the old leader, back as a follower, must truncate its
// unreplicated records by leader epoch (not keep them because they sat
// below some stale HW), so both logs end up identical.
func TestLeaderEpochTruncationOnRejoin(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, func(int32) bool { return true })
	var others []int32
	for _, b := range c.Brokers {
		if b.ID != ctrl {
			others = append(others, b.ID)
		}
	}
	oldLeader, follower := others[0], others[1]
	const topic = "kip101"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {oldLeader, follower}}, nil)
	waitFullISR(t, conn, topic, 1, 2)

	// Uncompressed, so the records can be found in the segment files.
	producerTo := func(addrs ...string) *kgo.Client {
		return newClient(t, addrs, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
			kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	}
	produceN(t, producerTo(c.Broker(oldLeader).Addr), "replicated", 10)
	waitUntil(t, 10*time.Second, "the follower has the first records", func() error {
		return logHolds(c.Broker(follower).LogDir, topic, "replicated-9")
	})

	// Freeze the follower; its pending long-poll fetch returns empty
	// (replica.fetch.wait.max.ms 500) into a socket nobody reads, so what
	// the leader appends next reaches only the leader's log.
	if err := c.Broker(follower).Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Broker(follower).Resume() })
	time.Sleep(time.Second)
	before, err := readState(conn, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	produceN(t, producerTo(c.Broker(oldLeader).Addr), "only-on-old-leader", 5)
	c.Broker(oldLeader).Kill()
	if err := c.Broker(follower).Resume(); err != nil {
		t.Fatal(err)
	}
	if err := logHolds(c.Broker(oldLeader).LogDir, topic, "only-on-old-leader-4"); err != nil {
		t.Fatalf("setup: the old leader did not write its unreplicated records: %v", err)
	}
	if err := logHolds(c.Broker(follower).LogDir, topic, "only-on-old-leader-0"); err == nil {
		t.Fatal("setup: the follower fetched the records meant to stay unreplicated")
	}

	// The follower (still in the ISR) is elected and takes new records at
	// the offsets the old leader used.
	waitUntil(t, sessionTimeout+15*time.Second, "the follower becomes leader", func() error {
		s, err := readState(conn, topic, 0)
		if err != nil {
			return err
		}
		if s.Leader != follower || s.LeaderEpoch <= before.LeaderEpoch {
			return fmt.Errorf("state %+v (before %+v)", s, before)
		}
		return nil
	})
	produceN(t, producerTo(c.Broker(follower).Addr), "new-leader", 8)

	c.Restart(t, c.Broker(oldLeader))
	waitFullISR(t, conn, topic, 1, 2)
	if err := logHolds(c.Broker(oldLeader).LogDir, topic, "new-leader-7"); err != nil {
		t.Errorf("the old leader did not fetch the new leader's records: %v", err)
	}
	if err := logHolds(c.Broker(oldLeader).LogDir, topic, "only-on-old-leader-"); err == nil {
		t.Errorf("the old leader kept records the new leader never had (no leader-epoch truncation)")
	}
	got := consumeAll(t, c.Addrs(), topic, 18, 30*time.Second)
	var values []string
	for _, r := range got {
		values = append(values, string(r.Value))
	}
	if len(values) != 18 || slices.ContainsFunc(values, func(v string) bool { return bytes.HasPrefix([]byte(v), []byte("only-on")) }) {
		t.Errorf("consumed %v, want the 10 replicated and 8 new-leader records", values)
	}
	hw := highWatermarks(t, c, topic)
	stopAll(t, c)
	compareReplicaLogs(t, c, conn, topic, hw)
}

// logHolds reports (nil) whether a partition-0 segment of topic in logDir
// contains needle.
func logHolds(logDir, topic, needle string) error {
	segs, err := filepath.Glob(filepath.Join(logDir, topic+"-0", "*.log"))
	if err != nil {
		return err
	}
	for _, s := range segs {
		data, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(needle)) {
			return nil
		}
	}
	return fmt.Errorf("%q not in %s's segments %v", needle, topic+"-0", segs)
}
