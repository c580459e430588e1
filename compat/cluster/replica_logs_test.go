package cluster

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
)

// logBytesBelow returns the bytes of a partition's segments (Kafka's .log
// files, in base-offset order) holding exactly the batches below hw. It
// fails if the log ends before hw: the replica lacks committed records.
func logBytesBelow(logDir, topic string, p int32, hw int64) ([]byte, error) {
	dir := filepath.Join(logDir, fmt.Sprintf("%s-%d", topic, p))
	all, err := allSegmentBytes(logDir, topic, p)
	if err != nil {
		return nil, err
	}
	// RecordBatch v2 header (DefaultRecordBatch.java): baseOffset int64,
	// batchLength int32, partitionLeaderEpoch int32, magic int8, crc int32,
	// attributes int16, lastOffsetDelta int32 at byte 23.
	pos, next := 0, int64(0)
	for next < hw {
		if pos+27 > len(all) {
			return nil, fmt.Errorf("%s: log ends at offset %d (%d bytes) below the HW %d", dir, next, len(all), hw)
		}
		base := int64(binary.BigEndian.Uint64(all[pos:]))
		length := int(binary.BigEndian.Uint32(all[pos+8:]))
		last := base + int64(int32(binary.BigEndian.Uint32(all[pos+23:])))
		if length <= 0 || pos+12+length > len(all) {
			return nil, fmt.Errorf("%s: truncated batch at byte %d (offset %d) below the HW %d", dir, pos, base, hw)
		}
		if last >= hw {
			return nil, fmt.Errorf("%s: batch %d..%d straddles the HW %d", dir, base, last, hw)
		}
		pos += 12 + length
		next = last + 1
	}
	return all[:pos], nil
}

// highWatermarks asks each partition's leader for its latest offset (the
// HW for read_uncommitted).
func highWatermarks(t *testing.T, c *harness.Cluster, topic string) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	var out map[int32]int64
	waitUntil(t, 30*time.Second, "ListOffsets latest of "+topic, func() error {
		ends, err := adm.ListEndOffsets(testCtx(t, 10*time.Second), topic)
		if err != nil {
			return err
		}
		out = map[int32]int64{}
		var ferr error
		ends.Each(func(o kadm.ListedOffset) {
			if o.Err != nil {
				ferr = fmt.Errorf("partition %d: %w", o.Partition, o.Err)
			}
			out[o.Partition] = o.Offset
		})
		return ferr
	})
	return out
}

// stopAll ends every running broker: a controlled shutdown, falling back to
// SIGKILL (inside Term) when it takes too long.
func stopAll(t *testing.T, c *harness.Cluster) {
	t.Helper()
	for _, b := range c.Brokers {
		if !b.Running() {
			continue
		}
		if err := b.Term(); err != nil {
			t.Logf("stop broker %d: %v", b.ID, err)
		}
	}
}

// compareReplicaLogs checks that every replica of every partition holds
// byte-identical batches below the HW. Call it with the brokers stopped.
// It returns the number of partitions whose replicas differ.
func compareReplicaLogs(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string, hw map[int32]int64) (divergent int) {
	t.Helper()
	assignment, err := topicAssignment(conn, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p, replicas := range assignment {
		var ref []byte
		var refID int32
		diverged := false
		for i, id := range replicas {
			got, err := logBytesBelow(c.Broker(id).LogDir, topic, p, hw[p])
			if err != nil {
				t.Errorf("replica %d: %v", id, err)
				continue
			}
			if i == 0 || ref == nil {
				ref, refID = got, id
				continue
			}
			if !bytes.Equal(ref, got) {
				at := 0
				for at < len(ref) && at < len(got) && ref[at] == got[at] {
					at++
				}
				t.Errorf("partition %d below HW %d: replica %d (%d bytes) and replica %d (%d bytes) differ from byte %d",
					p, hw[p], refID, len(ref), id, len(got), at)
				diverged = true
			}
		}
		if diverged {
			divergent++
		}
		t.Logf("partition %d: replicas %v compared below HW %d (%d bytes)", p, replicas, hw[p], len(ref))
	}
	if divergent > 0 {
		for _, b := range c.Brokers {
			harness.KeepDir(t, b.LogDir, fmt.Sprintf("broker-%d-logs", b.ID))
		}
	}
	return divergent
}
