package cluster

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// TestRackConsumerReadsLocalFollower (KIP-392): three brokers in racks
// r1-r3 with replica.selector.class RackAwareReplicaSelector; partition 0
// of a topic on all three, led by broker 1 (r1). Kafka's Java consumer
// with client.rack=r2 reads every record, and reads them from broker 2: the
// bytes that broker sends grow by at least the records read, while the
// leader and broker 3 send next to nothing meanwhile (every record was
// replicated before the consumer started). Then broker 2 dies; records
// written after go on reaching the consumer, now from the leader, none
// lost or read twice.
func TestRackConsumerReadsLocalFollower(t *testing.T) {
	const (
		topic     = "rack-local"
		first     = 1000
		then      = 300
		valueSize = 1000
	)
	metrics := map[int32]string{}
	c := harness.StartClusterPerBroker(t, 3, func(id int32) []string {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
		metrics[id] = addr
		return []string{"broker.rack=r" + strconv.Itoa(int(id)), "metrics.listener=" + addr}
	}, "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector")
	conn := c.ZK.Connect(t)
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {1, 2, 3}}, minISR2)
	waitFullISR(t, conn, topic, 1, 3)
	if l := mustStates(t, conn, topic, 1)[0].Leader; l != 1 {
		t.Fatalf("partition 0 led by %d, want 1 (r1, not the consumer's rack)", l)
	}

	cl := newClient(t, c.Addrs(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression())) // the bytes sent count the values
	produce := func(from, n int) {
		t.Helper()
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Value: bytes.Repeat([]byte{byte('a' + (from+i)%26)}, valueSize)}
		}
		if err := cl.ProduceSync(testCtx(t, 60*time.Second), recs...).FirstErr(); err != nil {
			t.Fatalf("produce %d records from %d: %v", n, from, err)
		}
	}
	produce(0, first)

	sent := func() map[int32]float64 {
		t.Helper()
		out := map[int32]float64{}
		for id, addr := range metrics {
			v, found, err := harness.ScrapeMetric(addr, "kafka_server_socket_server_metrics_outgoing_byte_total", `listener="PLAINTEXT"`)
			if err != nil || !found {
				t.Fatalf("broker %d outgoing bytes: found %v, %v", id, found, err)
			}
			out[id] = v
		}
		return out
	}
	before := sent()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-Xmx256m", "-cp", harness.JavaProgram(t, "RackConsumer"),
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err",
		"RackConsumer", strings.Join(c.Addrs(), ","), topic, "r2", strconv.Itoa(first+then), "80000")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 4096)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	seen := map[int64]int{}
	// readUntil takes the consumer's lines until it has printed offset
	// last (or "done"), failing on an early exit or after timeout.
	readUntil := func(last int64, timeout time.Duration) {
		t.Helper()
		deadline := time.After(timeout)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("consumer exited before offset %d: %v\nstderr:\n%s", last, <-exited, stderr.String())
				}
				if line == "done" {
					return
				}
				off, err := strconv.ParseInt(strings.TrimPrefix(line, "record "), 10, 64)
				if err != nil {
					t.Fatalf("consumer printed %q", line)
				}
				seen[off]++
				if off == last {
					return
				}
			case <-deadline:
				t.Fatalf("consumer did not reach offset %d within %v (%d offsets seen)\nstderr:\n%s", last, timeout, len(seen), stderr.String())
			}
		}
	}
	readUntil(first-1, 60*time.Second)

	after := sent()
	payload := float64(first * valueSize)
	grew := func(id int32) float64 { return after[id] - before[id] }
	if grew(2) < payload {
		t.Errorf("broker 2 (r2, the consumer's rack) sent %.0f bytes while the consumer read %.0f bytes of values", grew(2), payload)
	}
	for _, id := range []int32{1, 3} {
		if grew(id) > payload/10 {
			t.Errorf("broker %d (r%d) sent %.0f bytes while the consumer read %.0f bytes of values: it served the consumer", id, id, grew(id), payload)
		}
	}
	t.Logf("bytes sent while the r2 consumer read %d records: broker 1 %.0f, broker 2 %.0f, broker 3 %.0f", first, grew(1), grew(2), grew(3))

	// The consumer's follower dies: the next records come from the leader,
	// which now sends them twice, to broker 3 and to the consumer.
	c.Broker(2).Kill()
	delete(metrics, 2)
	before = sent()
	produce(first, then)
	readUntil(first+then-1, 60*time.Second)
	after = sent()
	if payload := float64(then * valueSize); grew(1) < 2*payload || grew(3) > payload/10 {
		t.Errorf("after broker 2 died, broker 1 sent %.0f bytes and broker 3 %.0f for %.0f bytes of values: want the leader to serve both broker 3 and the consumer",
			grew(1), grew(3), payload)
	}
	t.Logf("bytes sent while it read %d more with broker 2 dead: broker 1 %.0f, broker 3 %.0f", then, grew(1), grew(3))
	for line := range lines {
		if line != "done" {
			t.Errorf("consumer printed %q past the last offset", line)
		}
	}
	if err := <-exited; err != nil {
		t.Fatalf("consumer: %v\nstderr:\n%s", err, stderr.String())
	}
	for off := range int64(first + then) {
		if seen[off] != 1 {
			t.Errorf("offset %d read %d times, want once", off, seen[off])
		}
	}
	if len(seen) != first+then {
		t.Errorf("consumer read %d distinct offsets, want %d", len(seen), first+then)
	}
	if t.Failed() {
		t.Logf("consumer stderr:\n%s", stderr.String())
	}
}

// lockedBuffer is a child's stderr, read by the test while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
