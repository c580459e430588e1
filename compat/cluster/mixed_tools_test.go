package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 14: Kafka's own tools give the same answers whichever broker of a
// mixed cluster they are pointed at. Two Kafka 3.9.1 brokers and two
// kbrokers (a kbroker controller), a topic with replicas on both kinds, a
// consumer group that committed part of it; then kafka-topics --describe,
// kafka-consumer-groups --describe and kafka-log-dirs --describe, each run
// once against every broker, must print the same thing.
func TestMixedToolsSameAnswers(t *testing.T) {
	const topic, group = "tools", "tools-group"
	c := harness.StartMixedCluster(t, []bool{false, false, true, true}, "auto.leader.rebalance.enable=false")
	conn := c.ZK.Connect(t)
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {3, 1, 4}, 1: {1, 4, 2}, 2: {4, 2, 3}, 3: {2, 3, 1}}, minISR2)
	waitFullISR(t, conn, topic, 4, 3)

	producer := newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produceN(t, producer, "tools", 400)
	consumer := newClient(t, c.Addrs(), kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t, time.Minute)
	read := 0
	for read < 250 {
		fs := consumer.PollRecords(ctx, 250-read)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consuming: %v", err)
		}
		read += fs.NumRecords()
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	consumer.Close()
	// Every replica has everything, so the log-dir sizes settle.
	waitUntil(t, 30*time.Second, "every replica at the log end", func() error {
		hw := highWatermarks(t, c, topic)
		for p, off := range hw {
			if off == 0 {
				return fmt.Errorf("partition %d: HW 0", p)
			}
		}
		return nil
	})
	time.Sleep(2 * time.Second)

	for _, tool := range []struct {
		name string
		args []string
	}{
		{"kafka-topics", []string{"--describe", "--topic", topic}},
		{"kafka-consumer-groups", []string{"--describe", "--group", group}},
		{"kafka-log-dirs", []string{"--describe", "--topic-list", topic}},
	} {
		var first string
		var firstID int32
		for _, b := range c.Brokers {
			out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), tool.name, append([]string{"--bootstrap-server", b.Addr}, tool.args...)...)
			if err != nil {
				t.Fatalf("%s against broker %d (%s): %v\n%s\n%s", tool.name, b.ID, kindOf(c, b.ID), err, out, stderr)
			}
			out = normalizeToolOutput(out)
			if b == c.Brokers[0] {
				first, firstID = out, b.ID
				t.Logf("%s:\n%s", tool.name, out)
				continue
			}
			if out != first {
				t.Errorf("%s against broker %d (%s) differs from broker %d (%s):\n%s\n--- vs ---\n%s",
					tool.name, b.ID, kindOf(c, b.ID), firstID, kindOf(c, firstID), out, first)
			}
		}
	}
}

// normalizeToolOutput drops blank lines and trailing spaces.
func normalizeToolOutput(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " \t"); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
