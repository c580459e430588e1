package compat

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// tool runs a Kafka tool against the broker and fails the test on a
// non-zero exit, returning stdout.
func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	out, errOut, err := harness.RunTool(t, ctx, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, tail(out, 4000), tail(errOut, 4000))
	}
	return out
}

func listTopics(t *testing.T, addr string) []string {
	t.Helper()
	return strings.Fields(tool(t, "kafka-topics", "--bootstrap-server", addr, "--list"))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestTopicsCommand(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "tools-topic"
	tool(t, "kafka-topics", "--bootstrap-server", b.Addr, "--create", "--topic", topic,
		"--partitions", "2", "--replication-factor", "1")
	if l := listTopics(t, b.Addr); !contains(l, topic) {
		t.Fatalf("--list after create = %v, want %s in it", l, topic)
	}

	desc := tool(t, "kafka-topics", "--bootstrap-server", b.Addr, "--describe", "--topic", topic)
	if !regexp.MustCompile(`PartitionCount:\s*2\b`).MatchString(desc) {
		t.Errorf("--describe after create lacks PartitionCount: 2:\n%s", desc)
	}
	if n := strings.Count(desc, "Partition: "); n != 2 {
		t.Errorf("--describe shows %d partition lines, want 2:\n%s", n, desc)
	}

	tool(t, "kafka-topics", "--bootstrap-server", b.Addr, "--alter", "--topic", topic, "--partitions", "4")
	desc = tool(t, "kafka-topics", "--bootstrap-server", b.Addr, "--describe", "--topic", topic)
	if !regexp.MustCompile(`PartitionCount:\s*4\b`).MatchString(desc) || strings.Count(desc, "Partition: ") != 4 {
		t.Errorf("--describe after --alter --partitions 4:\n%s", desc)
	}

	tool(t, "kafka-topics", "--bootstrap-server", b.Addr, "--delete", "--topic", topic)
	deadline := time.Now().Add(30 * time.Second)
	for contains(listTopics(t, b.Addr), topic) {
		if time.Now().After(deadline) {
			t.Fatalf("topic %s still listed 30s after --delete", topic)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func TestConfigsCommand(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "cfg-topic"
	createTopic(t, b.Addr, topic, 1, nil)
	tool(t, "kafka-configs", "--bootstrap-server", b.Addr, "--entity-type", "topics", "--entity-name", topic,
		"--alter", "--add-config", "retention.ms=123456789")
	out := tool(t, "kafka-configs", "--bootstrap-server", b.Addr, "--entity-type", "topics", "--entity-name", topic,
		"--describe")
	if !strings.Contains(out, "retention.ms=123456789") {
		t.Fatalf("kafka-configs --describe does not show retention.ms=123456789:\n%s", out)
	}
}

func TestGetOffsets(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "offsets-topic"
	createTopic(t, b.Addr, topic, 2, nil)
	cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := 0; i < 5; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: seqValue(i)})
	}
	for i := 0; i < 3; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 1, Value: seqValue(i)})
	}
	produceSync(t, cl, recs...)

	latest := tool(t, "kafka-get-offsets", "--bootstrap-server", b.Addr, "--topic", topic)
	for _, want := range []string{topic + ":0:5", topic + ":1:3"} {
		if !strings.Contains(latest, want+"\n") {
			t.Errorf("kafka-get-offsets (latest) lacks %q:\n%s", want, latest)
		}
	}
	earliest := tool(t, "kafka-get-offsets", "--bootstrap-server", b.Addr, "--topic", topic, "--time", "-2")
	for _, want := range []string{topic + ":0:0", topic + ":1:0"} {
		if !strings.Contains(earliest, want+"\n") {
			t.Errorf("kafka-get-offsets --time -2 lacks %q:\n%s", want, earliest)
		}
	}
}

func TestConsumerGroupsResetOffsets(t *testing.T) {
	b := harness.StartBroker(t)
	const topic, group, perPartition = "reset-topic", "reset-g", 10
	createTopic(t, b.Addr, topic, 3, nil)
	cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := int32(0); p < 3; p++ {
		for i := 0; i < perPartition; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: seqValue(i)})
		}
	}
	produceSync(t, cl, recs...)

	// A group member reads everything and commits, then leaves: offsets can
	// only be reset for a group with no active members.
	member := newClient(t, b.Addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	ctx := testCtx(t, time.Minute)
	for got := 0; got < 3*perPartition; {
		fs := member.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group member read %d of %d records", got, 3*perPartition)
		}
		got += fs.NumRecords()
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	member.Close()

	for _, r := range describeGroup(t, b.Addr, group) {
		if r["CURRENT-OFFSET"] != fmt.Sprint(perPartition) || r["LAG"] != "0" {
			t.Errorf("before reset, partition %s: CURRENT-OFFSET %s LAG %s, want %d 0",
				r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"], perPartition)
		}
	}
	tool(t, "kafka-consumer-groups", "--bootstrap-server", b.Addr, "--group", group, "--topic", topic,
		"--reset-offsets", "--to-earliest", "--execute")
	rows := describeGroup(t, b.Addr, group)
	if len(rows) != 3 {
		t.Errorf("after reset: %d partition rows, want 3", len(rows))
	}
	for _, r := range rows {
		if r["CURRENT-OFFSET"] != "0" || r["LAG"] != fmt.Sprint(perPartition) {
			t.Errorf("after reset, partition %s: CURRENT-OFFSET %s LAG %s, want 0 %d",
				r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"], perPartition)
		}
	}
}

// TestDumpLog checks that Kafka's own DumpLogSegments parses every segment
// kbroker wrote, compressed batches included, and sees every record.
func TestDumpLog(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "dump-topic"
	createTopic(t, b.Addr, topic, 2, nil)
	var want []string
	for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(),
		kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		cl := newClient(t, b.Addr, kgo.ProducerBatchCompression(codec))
		var recs []*kgo.Record
		for i := 0; i < 50; i++ {
			v := fmt.Sprintf("dump-%d-%d", len(want), i)
			want = append(want, v)
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i % 4)), Value: []byte(v)})
		}
		produceSync(t, cl, recs...)
		cl.Close()
	}
	if err := b.Term(); err != nil {
		t.Errorf("SIGTERM shutdown: %v", err)
	}
	out := dumpSegments(t, b.LogDir)
	var missing []string
	for _, v := range want {
		if !strings.Contains(out, "payload: "+v+"\n") {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		t.Errorf("kafka-dump-log output lacks %d of %d records, first %q", len(missing), len(want), missing[0])
	}
}
