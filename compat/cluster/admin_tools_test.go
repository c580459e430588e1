package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 3 acceptance: after a broker bounce moved leaders away,
// `kafka-leader-election --election-type preferred` gives every partition
// back to its first assigned replica.
func TestPreferredLeaderElection(t *testing.T) {
	// Auto rebalance off: only the tool may move the leaders back.
	c := harness.StartCluster(t, 3, "auto.leader.rebalance.enable=false")
	conn := c.ZK.Connect(t)
	const topic, partitions = "preferred", 6
	createTopic(t, c, topic, partitions, 3, nil)
	waitFullISR(t, conn, topic, partitions, 3)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	var victim int32
	for _, b := range c.Brokers {
		if b.ID != ctrl {
			victim = b.ID
			break
		}
	}
	before := mustStates(t, conn, topic, partitions)
	led := partitionsLedBy(before, victim)
	if len(led) == 0 {
		t.Fatalf("broker %d leads nothing: %+v", victim, before)
	}
	c.Broker(victim).Kill()
	waitUntil(t, sessionTimeout+15*time.Second, "leaders move off the dead broker", func() error {
		s, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		if l := partitionsLedBy(s, victim); len(l) > 0 {
			return fmt.Errorf("still leads %v", l)
		}
		return nil
	})
	c.Restart(t, c.Broker(victim))
	waitFullISR(t, conn, topic, partitions, 3)
	if l := partitionsLedBy(mustStates(t, conn, topic, partitions), victim); len(l) != 0 {
		t.Fatalf("broker %d leads %v again before the election; auto rebalance is off", victim, l)
	}

	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-leader-election",
		"--bootstrap-server", strings.Join(c.Addrs(), ","), "--election-type", "preferred", "--all-topic-partitions")
	if err != nil {
		t.Fatalf("kafka-leader-election: %v\n%s\n%s", err, out, stderr)
	}
	t.Logf("kafka-leader-election:\n%s", out)
	assignment, err := topicAssignment(conn, topic)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 20*time.Second, "preferred leaders restored", func() error {
		s, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for p := range int32(partitions) {
			if s[p].Leader != assignment[p][0] {
				return fmt.Errorf("partition %d led by %d, preferred %d", p, s[p].Leader, assignment[p][0])
			}
		}
		return checkMetadataMatchesState(c, conn, topic, partitions)
	})
	for _, p := range led {
		if !strings.Contains(out, fmt.Sprintf("%s-%d", topic, p)) {
			t.Errorf("tool output does not name %s-%d, whose leader it moved", topic, p)
		}
	}
}

// Issue 3 acceptance: `kafka-reassign-partitions --execute` then --verify
// moves a partition to other brokers, with its records.
func TestReassignPartitions(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	const topic = "moving"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {1, 2}}, nil)
	waitFullISR(t, conn, topic, 1, 2)
	produceN(t, newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic)), "moving", 200)

	plan := filepath.Join(t.TempDir(), "reassign.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"moving","partition":0,"replicas":[3,2]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bootstrap := strings.Join(c.Addrs(), ",")
	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-reassign-partitions",
		"--bootstrap-server", bootstrap, "--reassignment-json-file", plan, "--execute")
	if err != nil {
		t.Fatalf("kafka-reassign-partitions --execute: %v\n%s\n%s", err, out, stderr)
	}
	// Once done, --verify also clears the throttles it may have set (an
	// IncrementalAlterConfigs on every broker); its exit status covers both.
	var verifyErr error
	var verifyOut string
	waitUntil(t, 60*time.Second, "--verify reports the reassignment complete", func() error {
		out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-reassign-partitions",
			"--bootstrap-server", bootstrap, "--reassignment-json-file", plan, "--verify")
		if !strings.Contains(out, "Reassignment of partition moving-0 is completed") {
			return fmt.Errorf("--verify: %v\n%s\n%s", err, out, stderr)
		}
		verifyErr, verifyOut = err, out+stderr
		return nil
	})
	if verifyErr != nil {
		t.Errorf("kafka-reassign-partitions --verify after completion: %v\n%s", verifyErr, firstLines(verifyOut, 8))
	}
	assignment, err := topicAssignment(conn, topic)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(assignment[0]) != "[3 2]" {
		t.Errorf("/brokers/topics/%s assigns %v after the move, want [3 2]", topic, assignment[0])
	}
	s, err := readState(conn, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains([]int32{2, 3}, s.Leader) || slices.Contains(s.ISR, 1) {
		t.Errorf("state after the move: %+v", s)
	}
	waitUntil(t, 15*time.Second, "Metadata agrees", func() error {
		return checkMetadataMatchesState(c, conn, topic, 1)
	})
	if got := consumeAll(t, c.Addrs(), topic, 200, 30*time.Second); len(got) != 200 {
		t.Errorf("read %d records after the move, want 200", len(got))
	}
	hw := highWatermarks(t, c, topic)
	stopAll(t, c)
	compareReplicaLogs(t, c, conn, topic, hw)
}

// Issue 3 acceptance: with racks a,a,b,b,c,c and replication factor 3,
// every partition has a replica on each rack.
func TestRackAwareAssignment(t *testing.T) {
	racks := map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
	c := harness.StartClusterPerBroker(t, 6, func(id int32) []string {
		return []string{"broker.rack=" + racks[id]}
	})
	conn := c.ZK.Connect(t)
	for id, rack := range racks {
		data, _, err := conn.Get(fmt.Sprintf("/brokers/ids/%d", id))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"rack":"`+rack+`"`) {
			t.Errorf("/brokers/ids/%d lacks rack %q: %s", id, rack, data)
		}
	}
	const topic, partitions = "racks", 12
	createTopic(t, c, topic, partitions, 3, nil)
	assignment, err := topicAssignment(conn, topic)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	for p, rs := range assignment {
		seen := map[string]bool{}
		for _, r := range rs {
			seen[racks[r]] = true
		}
		if len(rs) != 3 || len(seen) != 3 {
			t.Errorf("partition %d replicas %v span racks %v, want a, b and c", p, rs, seen)
		}
		leaders[rs[0]]++
	}
	// Kafka's rack-aware round robin also spreads preferred leaders evenly.
	for id := range racks {
		if leaders[id] != partitions/len(racks) {
			t.Errorf("preferred leaders per broker %v, want %d each", leaders, partitions/len(racks))
			break
		}
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
