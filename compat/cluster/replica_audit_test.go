package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// TestReplicaAudit: the online replica audit (docs/replica-audit.md) on
// three brokers. Equal replicas: every follower compares batches and
// finds nothing, and `kbroker audit` exits 0. Then one follower's copy of
// a committed record is changed on disk while it is stopped, with the
// batch CRC rewritten so that the broker keeps serving it: that follower's
// kbroker_replica_audit_divergent names the partition, and the CLI prints
// the partition, the offset, the leader's and the follower's CRCs, and
// exits 1.
func TestReplicaAudit(t *testing.T) {
	const topic = "audited"
	metrics := map[int32]string{}
	c := harness.StartClusterPerBroker(t, 3, func(id int32) []string {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
		metrics[id] = addr
		return []string{"metrics.listener=" + addr}
	}, "replica.audit.interval.ms=1000", "replica.fetch.backoff.ms=200")
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, 1, 3, nil)
	waitFullISR(t, conn, topic, 1, 3)

	cl := newClient(t, c.Addrs(), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	ctx := testCtx(t, 60*time.Second)
	for i := range 20 {
		// One record per produce: one batch each.
		if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("audit-value-%04d", i))).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	leader := mustStates(t, conn, topic, 1)[0].Leader
	var followers []int32
	for _, b := range c.Brokers {
		if b.ID != leader {
			followers = append(followers, b.ID)
		}
	}

	t.Run("equal replicas", func(t *testing.T) {
		for _, id := range followers {
			waitUntil(t, 20*time.Second, fmt.Sprintf("broker %d compares batches", id), func() error {
				n, _, err := harness.ScrapeMetric(metrics[id], "kbroker_replica_audit_batches_compared_total")
				if err != nil {
					return err
				}
				if n < 20 {
					return fmt.Errorf("%v batches compared", n)
				}
				return nil
			})
			if v, found, err := harness.ScrapeMetric(metrics[id], "kbroker_replica_audit_divergent_partitions"); err != nil || !found || v != 0 {
				t.Fatalf("broker %d: divergent_partitions %v (found %v, %v)", id, v, found, err)
			}
		}
		out, code := runAuditCLI(t, c.Addrs()[0])
		if code != 0 || out != "" {
			t.Fatalf("kbroker audit: exit %d, output %q", code, out)
		}
	})

	t.Run("divergent follower", func(t *testing.T) {
		victim := c.Broker(followers[0])
		if err := victim.Term(); err != nil {
			t.Fatalf("stop broker %d: %v", victim.ID, err)
		}
		offset := rewriteRecordValue(t, filepath.Join(victim.LogDir, topic+"-0"), "audit-value-0007", "audit-VALUE-0007")
		c.Restart(t, victim)
		waitUntil(t, 30*time.Second, "the follower's audit names the partition", func() error {
			v, _, err := harness.ScrapeMetric(metrics[victim.ID], "kbroker_replica_audit_divergent", `topic="`+topic+`"`, `partition="0"`)
			if err != nil {
				return err
			}
			if v != 1 {
				return fmt.Errorf("kbroker_replica_audit_divergent %v", v)
			}
			return nil
		})
		if v, _, err := harness.ScrapeMetric(metrics[victim.ID], "kbroker_replica_audit_divergent_partitions"); err != nil || v != 1 {
			t.Fatalf("divergent_partitions %v (%v)", v, err)
		}
		// The other follower agrees with the leader.
		if v, _, err := harness.ScrapeMetric(metrics[followers[1]], "kbroker_replica_audit_divergent_partitions"); err != nil || v != 0 {
			t.Fatalf("broker %d: divergent_partitions %v (%v)", followers[1], v, err)
		}
		// The leader still leads (a controlled shutdown of a follower does
		// not move it), which names it in the CLI's line.
		leaderNow := mustStates(t, conn, topic, 1)[0].Leader
		out, code := runAuditCLI(t, c.Addrs()...)
		if code != 1 {
			t.Fatalf("kbroker audit: exit %d, want 1; output %q", code, out)
		}
		f := strings.Fields(strings.TrimSpace(out))
		if len(f) != 7 || f[0] != topic || f[1] != "0" || f[2] != strconv.FormatInt(offset, 10) ||
			f[3] != strconv.Itoa(int(leaderNow)) || f[5] != strconv.Itoa(int(victim.ID)) || f[4] == f[6] {
			t.Fatalf("kbroker audit printed %q, want %q <offset %d> %d <crc> %d <other crc>", out, topic+" 0", offset, leaderNow, victim.ID)
		}
	})
}

// runAuditCLI runs `kbroker audit` and returns its stdout and exit code.
func runAuditCLI(t *testing.T, addrs ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Build(t), "audit", "--bootstrap-server", strings.Join(addrs, ","), "--timeout", "50s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), 0
	case errors.As(err, &exit):
		t.Logf("kbroker audit stderr: %s", stderr.String())
		return stdout.String(), exit.ExitCode()
	}
	t.Fatalf("kbroker audit: %v (%s)", err, stderr.String())
	return "", 0
}

// rewriteRecordValue replaces old by repl (same length) in the segments of
// dir and rewrites the CRC of the batch holding it, so that the batch is
// valid (log recovery and reads accept it) but differs from the leader's.
// It returns the batch's base offset.
func rewriteRecordValue(t *testing.T, dir, old, repl string) int64 {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segment in %s (%v)", dir, err)
	}
	for _, seg := range segs {
		data, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		at := bytes.Index(data, []byte(old))
		if at < 0 {
			continue
		}
		// Walk the batches to the one holding the value.
		pos := 0
		for pos+61 <= len(data) {
			size := int(binary.BigEndian.Uint32(data[pos+8:])) + 12
			if at < pos+size {
				break
			}
			pos += size
		}
		size := int(binary.BigEndian.Uint32(data[pos+8:])) + 12
		copy(data[at:], repl)
		batch := data[pos : pos+size]
		binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
		if err := os.WriteFile(seg, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return int64(binary.BigEndian.Uint64(batch))
	}
	t.Fatalf("%q not found in %s", old, dir)
	return 0
}

// TestReplicaAuditMixed: a kbroker follower audits an Apache Kafka 3.9.1
// leader with the same consumer fetch, and the Kafka leader sees an
// ordinary consumer: the follower compares every batch and finds none
// divergent, it stays in the ISR, and `kbroker audit` reads both kinds
// (the Kafka broker answering replica id -2 as a leader) and exits 0.
func TestReplicaAuditMixed(t *testing.T) {
	const topic = "audited-mixed"
	// Both kinds read the same settings; Kafka ignores kbroker's own keys
	// (metrics.listener, replica.audit.*) with a warning.
	metricsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
	c := harness.StartMixedCluster(t, []bool{true, false},
		"replica.audit.interval.ms=1000", "metrics.listener="+metricsAddr)
	kafka, kb := c.Brokers[0], c.Brokers[1]
	conn := c.ZK.Connect(t)
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {kafka.ID, kb.ID}}, nil)
	waitFullISR(t, conn, topic, 1, 2)

	cl := newClient(t, c.Addrs(), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	ctx := testCtx(t, 60*time.Second)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("mixed-value-%04d", i))).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	waitUntil(t, 20*time.Second, "the kbroker follower compares the Kafka leader's batches", func() error {
		n, _, err := harness.ScrapeMetric(metricsAddr, "kbroker_replica_audit_batches_compared_total")
		if err != nil {
			return err
		}
		if n < 10 {
			return fmt.Errorf("%v batches compared", n)
		}
		return nil
	})
	if v, _, err := harness.ScrapeMetric(metricsAddr, "kbroker_replica_audit_divergent_partitions"); err != nil || v != 0 {
		t.Fatalf("divergent_partitions %v (%v)", v, err)
	}
	st := mustStates(t, conn, topic, 1)[0]
	if st.Leader != kafka.ID || len(st.ISR) != 2 {
		t.Fatalf("partition state %+v, want the Kafka leader %d and both replicas in the ISR", st, kafka.ID)
	}
	out, code := runAuditCLI(t, c.Addrs()...)
	if code != 0 || out != "" {
		t.Fatalf("kbroker audit: exit %d, output %q", code, out)
	}
}
