package cluster

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// kafka-reassign-partitions --throttle on three brokers (KIP-73): the new
// replica's copy runs at the throttle, not at full speed, the tool's
// configs are in force on the brokers it names, and --verify clears them.
// The bounds are those of Kafka's ReplicationQuotasTest: a copy expected
// to take 4 s at the throttle takes more than 90% of that, and the rate
// over the whole move stays within 20% of the throttle.
func TestReassignWithThrottle(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	const (
		topic    = "throttled-move"
		records  = 80
		size     = 100_000
		throttle = records * size / 4 // bytes per second: 4 s for the copy
	)
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {1}}, nil)
	cl := newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for range records {
		v := make([]byte, size)
		rand.Read(v)
		if err := cl.ProduceSync(testCtx(t, 30*time.Second), &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	plan := filepath.Join(t.TempDir(), "reassign.json")
	if err := os.WriteFile(plan, []byte(`{"version":1,"partitions":[{"topic":"`+topic+`","partition":0,"replicas":[1,2]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bootstrap := strings.Join(c.Addrs(), ",")
	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-reassign-partitions",
		"--bootstrap-server", bootstrap, "--reassignment-json-file", plan, "--execute", "--throttle", fmt.Sprint(throttle))
	if err != nil || !strings.Contains(out, fmt.Sprintf("The inter-broker throttle limit was set to %d B/s", throttle)) {
		t.Fatalf("kafka-reassign-partitions --execute --throttle: %v\n%s\n%s", err, out, stderr)
	}
	// Timed from the tool's return: the copy began no later, so both the
	// duration and the rate are judged on the strict side.
	start := time.Now()
	var took time.Duration
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s, err := readState(conn, topic, 0)
		if err == nil && slices.Contains(s.ISR, 2) {
			took = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker 2 not in the ISR 60 s after the move started: %+v %v", s, err)
		}
	}
	bytes := float64(records * size)
	rate := bytes / took.Seconds()
	t.Logf("copied %.0f bytes in %v: %.0f B/s against a throttle of %d B/s", bytes, took, rate, throttle)
	if took < 3600*time.Millisecond {
		t.Errorf("the throttled copy took %v, want more than 3.6 s", took)
	}
	if rate > 1.2*throttle {
		t.Errorf("the move ran at %.0f B/s, over the throttle of %d B/s by more than 20%%", rate, throttle)
	}

	describe := func(args ...string) string {
		out, stderr, err := harness.RunTool(t, testCtx(t, time.Minute), "kafka-configs", append([]string{"--bootstrap-server", bootstrap, "--describe"}, args...)...)
		if err != nil {
			t.Fatalf("kafka-configs --describe %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	if out := describe("--entity-type", "brokers", "--entity-name", "2"); !strings.Contains(out, fmt.Sprintf("follower.replication.throttled.rate=%d", throttle)) {
		t.Errorf("broker 2's configs during the move:\n%s", out)
	}
	if out := describe("--entity-type", "topics", "--entity-name", topic); !strings.Contains(out, "leader.replication.throttled.replicas=0:1") || !strings.Contains(out, "follower.replication.throttled.replicas=0:2") {
		t.Errorf("topic configs during the move:\n%s", out)
	}
	waitUntil(t, 60*time.Second, "--verify reports the move complete and clears the throttle", func() error {
		out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-reassign-partitions",
			"--bootstrap-server", bootstrap, "--reassignment-json-file", plan, "--verify")
		if err != nil || !strings.Contains(out, "Clearing broker-level throttles") {
			return fmt.Errorf("--verify: %v\n%s\n%s", err, out, stderr)
		}
		return nil
	})
	if out := describe("--entity-type", "brokers", "--entity-name", "2"); strings.Contains(out, "throttled.rate") {
		t.Errorf("broker 2 still throttled after --verify:\n%s", out)
	}
}
