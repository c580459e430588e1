package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func listOffsets(t *testing.T, db *dataBroker, topic string, ts int64, epoch int32) kmsg.ListOffsetsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp, rp.CurrentLeaderEpoch = ts, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return request[*kmsg.ListOffsetsResponse](t, db.client(t), req).Topics[0].Partitions[0]
}

func TestListOffsetsSpecialTimestamps(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	db.mustCreate(t, "lo", 1, nil)
	cl := db.client(t)
	base := time.Now().UnixMilli() - 10_000
	// Offsets 0-1 at base, 2-4 at base+5000 (the max), 5 at base+1000.
	for _, b := range []struct {
		n  int
		ts int64
	}{{2, base}, {3, base + 5000}, {1, base + 1000}} {
		if r := produceRaw(t, cl, "lo", 0, 1, rawBatch(t, plainOpts(), b.n, b.ts)); r.ErrorCode != 0 {
			t.Fatal(errName(r.ErrorCode))
		}
	}
	cases := []struct {
		name       string
		ts         int64
		wantOffset int64
		wantTs     int64
	}{
		{"earliest", -2, 0, -1},
		{"latest", -1, 6, -1},
		{"max timestamp", -3, 2, base + 5000},
		{"earliest local", -4, 0, -1},
		{"latest tiered", -5, -1, -1},
		{"by timestamp", base + 1, 2, base + 5000},
		{"by exact timestamp", base, 0, base},
		{"after everything", base + 6000, -1, -1},
	}
	for _, c := range cases {
		got := listOffsets(t, db, "lo", c.ts, -1)
		if got.ErrorCode != 0 || got.Offset != c.wantOffset || got.Timestamp != c.wantTs {
			t.Errorf("%s: %s offset %d ts %d, want offset %d ts %d", c.name, errName(got.ErrorCode), got.Offset, got.Timestamp, c.wantOffset, c.wantTs)
		}
		if got.Offset >= 0 && got.LeaderEpoch != 0 {
			t.Errorf("%s: leader epoch %d, want 0", c.name, got.LeaderEpoch)
		}
	}
	if got := listOffsets(t, db, "lo", -1, 1); got.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Errorf("newer current leader epoch: %s", errName(got.ErrorCode))
	}
	if got := listOffsets(t, db, "nope", -1, -1); got.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: %s", errName(got.ErrorCode))
	}
}
