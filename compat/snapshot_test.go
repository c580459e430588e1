package compat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// snapshotName is a producer-state snapshot: the offset in 20 digits.
var snapshotName = regexp.MustCompile(`^([0-9]{20})\.snapshot$`)

// snapshotLine is one producer as DumpLogSegments prints a snapshot entry.
var snapshotLine = regexp.MustCompile(`^producerId: (-?\d+) producerEpoch: (-?\d+) coordinatorEpoch: (-?\d+) currentTxnFirstOffset: \S+ lastTimestamp: (-?\d+) (?:firstSequence: (-?\d+) lastSequence: (-?\d+) lastOffset: (-?\d+) offsetDelta: (-?\d+) timestamp: (-?\d+))?$`)

type dumpedProducer struct {
	id             int64
	epoch          int16
	lastSeq        int32
	lastOffset     int64
	hasBatch       bool
	coordinatorEpc int32
}

// dumpSnapshots runs kafka-dump-log once over files and returns, per file,
// the producers it printed. Every file must be dumped, and nothing may be
// reported corrupt.
func dumpSnapshots(t *testing.T, files []string) map[string][]dumpedProducer {
	t.Helper()
	ctx := testCtx(t, 3*time.Minute)
	out, errOut, err := harness.RunTool(t, ctx, "kafka-dump-log", "--files", strings.Join(files, ","))
	if err != nil {
		t.Fatalf("kafka-dump-log: %v\n%s", err, errOut)
	}
	for _, bad := range []string{"corrupt", "Corrupt", "failed schema validation", "unknown file version", "Exception", "Ignoring unknown file"} {
		if strings.Contains(out, bad) || strings.Contains(errOut, bad) {
			t.Fatalf("kafka-dump-log reports %q:\n%s\n%s", bad, tail(out, 3000), tail(errOut, 3000))
		}
	}
	got := map[string][]dumpedProducer{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(line, "Dumping "); ok {
			cur = f
			got[cur] = []dumpedProducer{}
			continue
		}
		if line == "" {
			continue
		}
		m := snapshotLine.FindStringSubmatch(line)
		if m == nil || cur == "" {
			t.Fatalf("kafka-dump-log printed an unexpected line %q", line)
		}
		id, _ := strconv.ParseInt(m[1], 10, 64)
		epoch, _ := strconv.ParseInt(m[2], 10, 16)
		ce, _ := strconv.ParseInt(m[3], 10, 32)
		p := dumpedProducer{id: id, epoch: int16(epoch), coordinatorEpc: int32(ce), lastSeq: -1, lastOffset: -1}
		if m[6] != "" {
			seq, _ := strconv.ParseInt(m[6], 10, 32)
			off, _ := strconv.ParseInt(m[7], 10, 64)
			p.lastSeq, p.lastOffset, p.hasBatch = int32(seq), off, true
		}
		got[cur] = append(got[cur], p)
	}
	for _, f := range files {
		if _, ok := got[f]; !ok {
			t.Errorf("kafka-dump-log did not dump %s", f)
		}
	}
	return got
}

// partitionSnapshots lists a partition directory's snapshot files by
// offset, ascending.
func partitionSnapshots(t *testing.T, dir string) (offsets []int64, files []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if m := snapshotName.FindStringSubmatch(e.Name()); m != nil {
			off, _ := strconv.ParseInt(m[1], 10, 64)
			offsets = append(offsets, off)
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i] < files[j] })
	sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
	return offsets, files
}

// TestDumpProducerSnapshots: three idempotent producers write known
// numbers of records to two partitions whose small segments roll often;
// after a clean shutdown Kafka's own kafka-dump-log must read every
// .snapshot file kbroker wrote, the one at each partition's log end must
// list exactly those producers at epoch 0 with the last sequence each
// wrote there, and the ones written at rolls only those producers at
// earlier sequences (issue 10 item 4, acceptance a).
func TestDumpProducerSnapshots(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "snapshots"
	segBytes := "8192"
	createTopic(t, b.Addr, topic, 2, map[string]*string{"segment.bytes": &segBytes})
	const producers, perPartition, perBatch = 3, 300, 10
	lastSeq := map[int64]int32{} // producer id → last sequence, the same on both partitions
	for i := 0; i < producers; i++ {
		cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
		for n := 0; n < perPartition; n += perBatch {
			var recs []*kgo.Record
			for p := int32(0); p < 2; p++ {
				for j := 0; j < perBatch; j++ {
					recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "producer %d record %04d %0100d", i, n+j, 0)})
				}
			}
			produceSync(t, cl, recs...)
		}
		id, epoch, err := cl.ProducerID(testCtx(t, 10*time.Second))
		if err != nil || id < 0 || epoch != 0 {
			t.Fatalf("producer %d: id %d epoch %d: %v", i, id, epoch, err)
		}
		lastSeq[id] = perPartition - 1
		cl.Close()
	}
	if err := b.Term(); err != nil {
		t.Fatalf("SIGTERM shutdown: %v", err)
	}

	var all []string
	type part struct {
		offsets []int64
		files   []string
	}
	parts := map[int]part{}
	for p := 0; p < 2; p++ {
		offs, files := partitionSnapshots(t, filepath.Join(b.LogDir, fmt.Sprintf("%s-%d", topic, p)))
		// One snapshot per roll plus the one at the log end; with 8 KiB
		// segments and about 70 KiB per partition there are several rolls.
		if len(files) < 3 {
			t.Fatalf("partition %d: snapshot files %v, want one per roll and one at the log end", p, offs)
		}
		if end := offs[len(offs)-1]; end != producers*perPartition {
			t.Errorf("partition %d: latest snapshot at %d, want the log end %d", p, end, producers*perPartition)
		}
		parts[p] = part{offs, files}
		all = append(all, files...)
	}
	dumped := dumpSnapshots(t, all)
	for p, pt := range parts {
		for i, f := range pt.files {
			entries := dumped[f]
			seen := map[int64]bool{}
			for _, e := range entries {
				want, ours := lastSeq[e.id]
				switch {
				case !ours:
					t.Errorf("%s: producer %d was never used by the test", f, e.id)
				case e.epoch != 0 || e.coordinatorEpc != -1 || !e.hasBatch:
					t.Errorf("%s: producer %d epoch %d coordinator epoch %d batch %v, want epoch 0, -1, a batch", f, e.id, e.epoch, e.coordinatorEpc, e.hasBatch)
				case e.lastOffset >= pt.offsets[i]:
					t.Errorf("%s: producer %d's last offset %d is not below the snapshot's offset %d", f, e.id, e.lastOffset, pt.offsets[i])
				case i == len(pt.files)-1 && e.lastSeq != want:
					t.Errorf("%s (log end): producer %d last sequence %d, want %d", f, e.id, e.lastSeq, want)
				case e.lastSeq > want:
					t.Errorf("%s: producer %d last sequence %d beyond what it wrote (%d)", f, e.id, e.lastSeq, want)
				}
				seen[e.id] = true
			}
			if i == len(pt.files)-1 && len(seen) != producers {
				t.Errorf("partition %d: the log-end snapshot lists %d producers %+v, want the %d the test ran", p, len(seen), entries, producers)
			}
		}
	}
}

// TestIdempotentProducerThroughSigkill sends 60,000 records with the Java
// idempotent producer (acks=all, unbounded retries) while the broker is
// SIGKILLed twice and restarted on the same log dir; small segments make
// the restarts load producer state from a roll's snapshot plus a replay.
// Batches in flight at a kill are retried against the restarted broker:
// every value must land exactly once, in order, with no send error (an
// OUT_OF_ORDER_SEQUENCE_NUMBER fails the producer's batch) (issue 10 item
// 4, acceptance b).
func TestIdempotentProducerThroughSigkill(t *testing.T) {
	proxy := harness.NewProxy(t, "")
	b := harness.StartBroker(t, "advertised.listeners=PLAINTEXT://"+proxy.Addr)
	proxy.SetTarget(b.Addr)
	const topic, n = "idempotent-kill", 60000
	segBytes := "65536"
	createTopic(t, b.Addr, topic, 3, map[string]*string{"segment.bytes": &segBytes})

	cfg := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(cfg, []byte(strings.Join([]string{
		"enable.idempotence=true",
		"acks=all",
		"retries=2147483647",
		"max.in.flight.requests.per.connection=5",
		"delivery.timeout.ms=240000",
		"request.timeout.ms=10000",
		"reconnect.backoff.ms=20",
		"reconnect.backoff.max.ms=200",
		"retry.backoff.ms=50",
		"linger.ms=5",
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var out, errOut string
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		out, errOut, runErr = harness.RunTool(t, ctx, "kafka-verifiable-producer", "--bootstrap-server", proxy.Addr,
			"--topic", topic, "--max-messages", strconv.Itoa(n), "--throughput", "-1", "--acks", "-1",
			"--producer.config", cfg)
	}()
	// Kill when a third and two thirds of the records are in the log.
	kills := 0
	for _, at := range []int64{n / 3, 2 * n / 3} {
		deadline := time.Now().Add(2 * time.Minute)
		for logged(t, b.Addr, topic) < at {
			if time.Now().After(deadline) {
				t.Fatalf("fewer than %d records written within 2 minutes", at)
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.Kill()
		kills++
		t.Logf("SIGKILL %d with at least %d records written", kills, at)
		b.Restart(t)
	}
	wg.Wait()
	if runErr != nil {
		t.Fatalf("kafka-verifiable-producer: %v\n%s", runErr, tail(errOut, 4000))
	}
	acked, sendErrors := verifiableProducerAcks(t, out)
	if sendErrors > 0 || acked != n {
		t.Fatalf("verifiable producer: %d acked, %d send errors after %d kills; want %d acked, 0 errors", acked, sendErrors, kills, n)
	}
	// The Java producer retries an out-of-order answer (and may bump its
	// epoch), so its send results alone would not show one: its log does.
	for _, bad := range []string{"OUT_OF_ORDER_SEQUENCE_NUMBER", "OutOfOrderSequence", "UNKNOWN_PRODUCER_ID", "INVALID_PRODUCER_EPOCH"} {
		if n := strings.Count(errOut+out, bad); n > 0 {
			t.Errorf("the producer was answered %s %d times after the restarts:\n%s", bad, n, tail(errOut, 3000))
		}
	}
	if !hasSnapshots(t, b.LogDir, topic) {
		t.Errorf("no partition of %s rolled a segment: the restarts had no snapshot to load", topic)
	}

	recs := consumeN(t, b.Addr, topic, n, 2*time.Minute)
	seen := make([]bool, n)
	last := map[int32]int{}
	for _, r := range recs {
		v, err := strconv.Atoi(string(r.Value))
		if err != nil || v < 0 || v >= n {
			t.Fatalf("unexpected value %q at %d@%d", r.Value, r.Partition, r.Offset)
		}
		if seen[v] {
			t.Fatalf("duplicate value %d at %d@%d", v, r.Partition, r.Offset)
		}
		seen[v] = true
		if l, ok := last[r.Partition]; ok && v <= l {
			t.Fatalf("partition %d: value %d after %d (reordered)", r.Partition, v, l)
		}
		last[r.Partition] = v
	}
	for v, ok := range seen {
		if !ok {
			t.Fatalf("gap: value %d never read", v)
		}
	}
}

// logged is the sum of the topic's end offsets, 0 while the broker does
// not answer.
func logged(t *testing.T, addr, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
	if err != nil {
		return 0
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var sum int64
	for _, ps := range ends {
		for _, o := range ps {
			if o.Err == nil {
				sum += o.Offset
			}
		}
	}
	return sum
}

// hasSnapshots reports whether a partition of topic has a snapshot written
// at a roll, before any clean shutdown could write one.
func hasSnapshots(t *testing.T, logDir, topic string) bool {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(logDir, topic+"-*", "*.snapshot"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m) > 0
}
