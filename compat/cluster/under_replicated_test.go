package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 4: `kafka-topics --describe --under-replicated-partitions` lists
// exactly the partitions a dead broker left under-replicated, and nothing
// once it is back in every ISR.
func TestUnderReplicatedPartitions(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	// Replicas of "urp" partitions 0 and 1 include the victim; partition 2
	// does not, so the listing must be selective.
	var victim, a int32 = -1, -1
	for _, b := range c.Brokers {
		switch {
		case b.ID == ctrl:
		case victim < 0:
			victim = b.ID
		default:
			a = b.ID
		}
	}
	const topic = "urp"
	createTopicAssigned(t, c, topic, map[int32][]int32{
		0: {ctrl, victim}, 1: {victim, a}, 2: {a, ctrl},
	}, nil)
	waitFullISR(t, conn, topic, 3, 2)
	if got := underReplicated(t, c.Broker(ctrl).Addr, topic); len(got) != 0 {
		t.Fatalf("healthy cluster lists under-replicated partitions %v", got)
	}

	c.Broker(victim).Kill()
	waitUntil(t, sessionTimeout+15*time.Second, "the dead broker leaves the ISRs", func() error {
		for _, p := range []int32{0, 1} {
			s, err := readState(conn, topic, p)
			if err != nil {
				return err
			}
			if slices.Contains(s.ISR, victim) {
				return fmt.Errorf("partition %d: %+v", p, s)
			}
		}
		return nil
	})
	waitUntil(t, 30*time.Second, "the tool lists partitions 0 and 1", func() error {
		if got := underReplicated(t, c.Broker(ctrl).Addr, topic); fmt.Sprint(got) != "[0 1]" {
			return fmt.Errorf("under-replicated partitions %v", got)
		}
		return nil
	})

	c.Restart(t, c.Broker(victim))
	waitFullISR(t, conn, topic, 3, 2)
	waitUntil(t, 30*time.Second, "the tool lists nothing after recovery", func() error {
		if got := underReplicated(t, c.Broker(ctrl).Addr, topic); len(got) != 0 {
			return fmt.Errorf("under-replicated partitions %v", got)
		}
		return nil
	})
}

// underReplicated runs `kafka-topics --describe --under-replicated-partitions`
// and returns the partitions it lists, sorted.
func underReplicated(t *testing.T, addr, topic string) []int32 {
	t.Helper()
	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-topics",
		"--bootstrap-server", addr, "--describe", "--under-replicated-partitions", "--topic", topic)
	if err != nil {
		t.Fatalf("kafka-topics --under-replicated-partitions: %v\n%s\n%s", err, out, stderr)
	}
	var ps []int32
	for _, m := range describeLine.FindAllStringSubmatch(out, -1) {
		ps = append(ps, ids(m[1])[0])
	}
	slices.Sort(ps)
	return ps
}
