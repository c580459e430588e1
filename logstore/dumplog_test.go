//go:build kafkatools

// Run with `go test -tags kafkatools ./logstore -run DumpLog`: needs java and
// Kafka's jars in compat/lib.
package logstore

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestKafkaDumpLogReadsOurSegments has Kafka's own DumpLogSegments read a
// FileLog's segment, offset index and time index.
func TestKafkaDumpLogReadsOurSegments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	l := openLog(t, dir, smallCfg(), true, 0)
	appendN(t, l, 30, 3, 1700000000000, 4)
	z, _ := EncodeBatch(BatchOptions{Compression: CompressionZstd, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]Record{{Key: []byte("k"), Value: []byte("zstd-value"), Timestamp: 1700000001000}})
	bs, _ := ParseBatches(z.Raw)
	if _, err := l.AppendAsLeader(bs, 5, 1700000009999); err != nil {
		t.Fatal(err)
	}
	bases := l.SegmentBaseOffsets()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	libs, _ := filepath.Abs("../compat/lib")
	last := bases[len(bases)-1]
	files := []string{segmentName(dir, 0, ".log"), segmentName(dir, 0, ".index"), segmentName(dir, 0, ".timeindex"), segmentName(dir, last, ".log")}
	out, err := exec.Command("java", "-cp", libs+"/*", "org.apache.kafka.tools.DumpLogSegments",
		"--deep-iteration", "--print-data-log", "--files", strings.Join(files, ",")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"baseOffset: 0 lastOffset: 2 count: 3",
		"partitionLeaderEpoch: 4",
		"offset: 5 position: 130",
		"timestamp: 1700000000005 offset: 5",
		"LogAppendTime: 1700000009999",
		"compresscodec: zstd",
		"payload: zstd-value",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("DumpLogSegments output lacks %q", want)
		}
	}
	if strings.Contains(text, "isvalid: false") || strings.Contains(text, "Exception") {
		t.Errorf("DumpLogSegments found problems:\n%s", text)
	}
	out, err = exec.Command("java", "-cp", libs+"/*", "org.apache.kafka.tools.DumpLogSegments", "--index-sanity-check",
		"--files", segmentName(dir, 0, ".index")+","+segmentName(dir, 0, ".timeindex")).CombinedOutput()
	if err != nil || strings.Count(string(out), "passed sanity check") != 2 {
		t.Fatalf("index sanity check: %v\n%s", err, out)
	}
}

// TestKafkaDumpLogReadsOurTxnIndex has DumpLogSegments read a .txnindex
// written by an abort marker: Kafka's TransactionIndex must see our entry.
func TestKafkaDumpLogReadsOurTxnIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	l := openLog(t, dir, smallCfg(), true, 0)
	writeTxnScenario(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	libs, _ := filepath.Abs("../compat/lib")
	out, err := exec.Command("java", "-cp", libs+"/*", "org.apache.kafka.tools.DumpLogSegments",
		"--deep-iteration", "--files", segmentName(dir, 0, txnIndexSuffix)+","+segmentName(dir, 0, ".log")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"version: 0 producerId: 1 firstOffset: 0 lastOffset: 5 lastStableOffset: 4",
		"isTransactional: true isControl: true",
		"endTxnMarker: ABORT coordinatorEpoch: 2",
		"endTxnMarker: COMMIT coordinatorEpoch: 2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("DumpLogSegments output lacks %q:\n%s", want, text)
		}
	}
}
