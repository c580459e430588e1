package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func deleteRecords(t *testing.T, db *dataBroker, topic string, offset int64) kmsg.DeleteRecordsResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return request[*kmsg.DeleteRecordsResponse](t, db.client(t), req).Topics[0].Partitions[0]
}

func TestDeleteRecordsThenFetch(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "dr", 1, nil)
	db.mustCreate(t, "compacted", 1, map[string]string{"cleanup.policy": "compact"})
	cl := db.client(t)
	for i := 0; i < 5; i++ {
		produceRaw(t, cl, "dr", 0, 1, rawBatch(t, plainOpts(), 1, time.Now().UnixMilli()))
	}
	if got := deleteRecords(t, db, "dr", 2); got.ErrorCode != 0 || got.LowWatermark != 2 {
		t.Fatalf("delete before 2: %s low watermark %d", errName(got.ErrorCode), got.LowWatermark)
	}
	if got := deleteRecords(t, db, "dr", 1); got.ErrorCode != 0 || got.LowWatermark != 2 {
		t.Fatalf("delete below the log start: %s low watermark %d", errName(got.ErrorCode), got.LowWatermark)
	}
	if got := deleteRecords(t, db, "dr", 6); got.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("delete past the high watermark: %s", errName(got.ErrorCode))
	}
	if p := request[*kmsg.FetchResponse](t, cl, fetchReq(tp, 0, 1, 0, 0)).Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch below the log start: %s", errName(p.ErrorCode))
	}
	p := request[*kmsg.FetchResponse](t, cl, fetchReq(tp, 0, 2, 0, 0)).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LogStartOffset != 2 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch at the log start: %s, log start %d", errName(p.ErrorCode), p.LogStartOffset)
	}
	if got := listOffsets(t, db, "dr", -2, -1); got.Offset != 2 {
		t.Fatalf("earliest after delete: %d", got.Offset)
	}
	if got := deleteRecords(t, db, "dr", -1); got.ErrorCode != 0 || got.LowWatermark != 5 {
		t.Fatalf("delete to the high watermark: %s low watermark %d", errName(got.ErrorCode), got.LowWatermark)
	}
	if got := deleteRecords(t, db, "compacted", -1); got.ErrorCode != kerr.PolicyViolation.Code {
		t.Fatalf("compacted topic: %s", errName(got.ErrorCode))
	}
}
