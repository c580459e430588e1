package logstore

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// The fixture in testdata/kafka-4.4/real-0 is the start of a segment that
// Apache Kafka 4.4 wrote (lz4 batches from a franz-go producer,
// log.index.interval.bytes=500), cut at a batch boundary, with Kafka's own
// .index and .timeindex for the whole segment saved as kafka.index and
// kafka.timeindex.
const kafkaFixture = "testdata/kafka-4.4/real-0"

func TestReadKafkaWrittenSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "real-0")
	os.MkdirAll(dir, 0o755)
	for _, f := range []string{"00000000000000000000.log", "partition.metadata", "leader-epoch-checkpoint"} {
		data, err := os.ReadFile(filepath.Join(kafkaFixture, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	cfg := DefaultConfig()
	cfg.IndexIntervalBytes = 500
	// No index files and no clean shutdown: everything is recovered and
	// re-indexed from the .log alone.
	l, err := OpenFileLog(dir, cfg, FileLogOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	recs := logRecords(t, l)
	if int64(len(recs)) != l.LogEndOffset() || l.LogEndOffset() < 50 {
		t.Fatalf("%d records, LEO %d", len(recs), l.LogEndOffset())
	}
	if e := l.LeaderEpochEntries(); len(e) != 1 || e[0] != (EpochEntry{0, 0}) {
		t.Fatalf("epochs %v", e)
	}
	if _, ok, err := readPartitionMetadata(dir); !ok || err != nil {
		t.Fatalf("partition.metadata: %v %v", ok, err)
	}
	leo := l.LogEndOffset()
	size := l.Size()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Our index entries must be Kafka's, for the part of the segment we have.
	ours, _ := os.ReadFile(segmentName(dir, 0, ".index"))
	theirs, _ := os.ReadFile(filepath.Join(kafkaFixture, "kafka.index"))
	var want []byte
	for i := 0; i+8 <= len(theirs); i += 8 {
		if int64(binary.BigEndian.Uint32(theirs[i+4:])) < size {
			want = append(want, theirs[i:i+8]...)
		}
	}
	if len(want) == 0 || !bytes.Equal(ours, want) {
		t.Fatalf("offset index: ours %x\nKafka's %x", ours, want)
	}
	ourT, _ := os.ReadFile(segmentName(dir, 0, ".timeindex"))
	theirT, _ := os.ReadFile(filepath.Join(kafkaFixture, "kafka.timeindex"))
	var wantT []byte
	for i := 0; i+12 <= len(theirT); i += 12 {
		if int64(binary.BigEndian.Uint32(theirT[i+8:])) < leo {
			wantT = append(wantT, theirT[i:i+12]...)
		}
	}
	// Closing appends one last entry for the segment's max timestamp,
	// beyond the part Kafka had indexed when we cut the segment.
	if len(wantT) == 0 || !bytes.HasPrefix(ourT, wantT) || len(ourT) > len(wantT)+12 {
		t.Fatalf("time index: ours %x\nKafka's %x", ourT, wantT)
	}
}
