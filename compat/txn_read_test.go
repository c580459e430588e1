package compat

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/kbroker/kbroker/logstore"
)

// writeTransactions appends, with the broker stopped, what a transactional
// producer and its coordinator would have written: producer 1000 aborts
// two records, producer 2000 commits one, producer 3000 leaves one open,
// with plain records between. Produce cannot write transactional batches
// before the transaction coordinator exists, so the log is written
// directly, in the broker's own format.
func writeTransactions(t *testing.T, dir string) {
	t.Helper()
	l, err := logstore.OpenFileLog(dir, logstore.DefaultConfig(), logstore.FileLogOptions{CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	epoch := int32(0)
	if es := l.LeaderEpochEntries(); len(es) > 0 {
		epoch = es[len(es)-1].Epoch
	}
	now := time.Now().UnixMilli()
	batch := func(pid int64, values ...string) {
		t.Helper()
		opts := logstore.BatchOptions{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
		if pid >= 0 {
			opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = pid, 0, 0, true
		}
		var recs []logstore.Record
		for _, v := range values {
			recs = append(recs, logstore.Record{Value: []byte(v), Timestamp: now})
		}
		b, err := logstore.EncodeBatch(opts, recs)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader([]logstore.Batch{b}, epoch, -1); err != nil {
			t.Fatal(err)
		}
	}
	marker := func(pid int64, commit bool) {
		t.Helper()
		if _, err := l.AppendMarkerAsLeader(logstore.Marker{ProducerID: pid, Commit: commit}, epoch, now); err != nil {
			t.Fatal(err)
		}
	}
	batch(1000, "aborted-1", "aborted-2") // 1-2
	batch(-1, "plain-1")                  // 3
	batch(2000, "committed-1")            // 4
	marker(1000, false)                   // 5
	marker(2000, true)                    // 6
	batch(3000, "open-1")                 // 7
	batch(-1, "plain-2")                  // 8
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// consoleConsume runs kafka-console-consumer from the start until it has
// been idle for idle, and returns the values it printed.
func consoleConsume(t *testing.T, addr, topic, isolation string, idle time.Duration) []string {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	out, errOut, err := harness.RunTool(t, ctx, "kafka-console-consumer", "--bootstrap-server", addr,
		"--topic", topic, "--from-beginning", "--isolation-level", isolation,
		"--timeout-ms", fmt.Sprint(idle.Milliseconds()))
	// The consumer exits non-zero on its idle timeout; what it printed is
	// what counts.
	if err != nil && !strings.Contains(errOut, "TimeoutException") && !strings.Contains(errOut, "Processed a total of") {
		t.Fatalf("kafka-console-consumer: %v\n%s\n%s", err, out, errOut)
	}
	var vals []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" {
			vals = append(vals, line)
		}
	}
	return vals
}

// TestReadCommittedWithJavaConsumer: Kafka's own consumer at
// read_committed reads a kbroker partition holding aborted, committed and
// open transactions: it stops at the last stable offset (before the open
// transaction), drops the aborted records from the aborted transactions
// the fetch lists and skips the markers; read_uncommitted sees every
// record. A WriteTxnMarkers commit from a client then moves the LSO past
// the open transaction (for franz-go's consumer too), and kafka-dump-log
// reads the .txnindex entry.
func TestReadCommittedWithJavaConsumer(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "txn-read"
	createTopic(t, b.Addr, topic, 1, nil)
	produceSync(t, newClient(t, b.Addr), &kgo.Record{Topic: topic, Value: []byte("plain-0")})
	if err := b.Term(); err != nil {
		t.Fatalf("SIGTERM shutdown: %v", err)
	}
	dir := filepath.Join(b.LogDir, topic+"-0")
	writeTransactions(t, dir)
	b.Restart(t)

	idle := 5 * time.Second
	if got, want := consoleConsume(t, b.Addr, topic, "read_committed", idle), []string{"plain-0", "plain-1", "committed-1"}; !slices.Equal(got, want) {
		t.Errorf("read_committed with producer 3000's transaction open: %q, want %q", got, want)
	}
	all := []string{"plain-0", "aborted-1", "aborted-2", "plain-1", "committed-1", "open-1", "plain-2"}
	if got := consoleConsume(t, b.Addr, topic, "read_uncommitted", idle); !slices.Equal(got, all) {
		t.Errorf("read_uncommitted: %q, want %q", got, all)
	}

	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.Committed = 3000, true
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := req.RequestWith(testCtx(t, 30*time.Second), newClient(t, b.Addr))
	if err != nil {
		t.Fatalf("WriteTxnMarkers: %v", err)
	}
	if code := resp.Markers[0].Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("WriteTxnMarkers: error %d", code)
	}
	want := []string{"plain-0", "plain-1", "committed-1", "open-1", "plain-2"}
	if got := consoleConsume(t, b.Addr, topic, "read_committed", idle); !slices.Equal(got, want) {
		t.Errorf("read_committed after the commit: %q, want %q", got, want)
	}
	var got []string
	for _, r := range consumeN(t, b.Addr, topic, len(want), 30*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted())) {
		got = append(got, string(r.Value))
	}
	if !slices.Equal(got, want) {
		t.Errorf("franz-go read_committed after the commit: %q, want %q", got, want)
	}

	if err := b.Term(); err != nil {
		t.Fatalf("SIGTERM shutdown: %v", err)
	}
	ctx := testCtx(t, 2*time.Minute)
	out, errOut, err := harness.RunTool(t, ctx, "kafka-dump-log", "--files", filepath.Join(dir, "00000000000000000000.txnindex"))
	if err != nil {
		t.Fatalf("kafka-dump-log: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "version: 0 producerId: 1000 firstOffset: 1 lastOffset: 5 lastStableOffset: 4") {
		t.Errorf("kafka-dump-log .txnindex:\n%s", out)
	}
}
