package server

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

func writeMarkersReq(pid int64, epoch int16, commit bool, coordinatorEpoch int32, topic string, partitions ...int32) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, commit, coordinatorEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, partitions
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	return req
}

func markerErr(t *testing.T, r *kmsg.WriteTxnMarkersResponse) int16 {
	t.Helper()
	if len(r.Markers) != 1 || len(r.Markers[0].Topics) != 1 || len(r.Markers[0].Topics[0].Partitions) != 1 {
		t.Fatalf("response shape %+v", r)
	}
	return r.Markers[0].Topics[0].Partitions[0].ErrorCode
}

func fetchAt(t *testing.T, addr string, tp *Topic, offset int64, isolation int8) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := fetchReq(tp, 0, offset, 0, 0)
	req.IsolationLevel = isolation
	// v11: before flexible versions and topic ids, the wire form of a
	// null array (-1) and an empty one (0) differ plainly.
	resp := rawRequest(t, addr, req, 11).(*kmsg.FetchResponse)
	return resp.Topics[0].Partitions[0]
}

func listLatestOffset(t *testing.T, addr, topic string, isolation int8) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, listLatest, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := rawRequest(t, addr, req, 5).(*kmsg.ListOffsetsResponse)
	return resp.Topics[0].Partitions[0].Offset
}

// The whole read path of a transaction: its records are hidden from
// read_committed fetches and ListOffsets until WriteTxnMarkers ends it;
// an abort is then listed with the records, and DescribeProducers shows
// the coordinator epoch the marker carried.
func TestWriteTxnMarkersEndsATransactionForReadCommitted(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "txn", 1, nil)
	cl := db.client(t)
	p := db.b.partition("txn", 0)
	const pid = 4000
	b, err := logstore.EncodeBatch(logstore.BatchOptions{PartitionLeaderEpoch: -1, ProducerID: pid, ProducerEpoch: 2, BaseSequence: 0, Transactional: true},
		[]logstore.Record{{Key: []byte("k"), Value: []byte("v"), Timestamp: time.Now().UnixMilli()}, {Key: []byte("k2"), Value: []byte("v2"), Timestamp: time.Now().UnixMilli()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{b}, 1, replica.AppendRules{LogAppendTime: -1, VerificationGuard: verifiedGuard(t, p, pid)}); err != nil {
		t.Fatal(err)
	}
	produceRaw(t, cl, "txn", 0, 1, rawBatch(t, plainOpts(), 1, time.Now().UnixMilli())) // offset 2

	rc := fetchAt(t, db.addr, tp, 0, 1)
	if rc.ErrorCode != 0 || rc.HighWatermark != 3 || rc.LastStableOffset != 0 || len(rc.RecordBatches) != 0 || rc.AbortedTransactions == nil {
		t.Fatalf("read_committed during the transaction: err %s HW %d LSO %d, %d record bytes, aborted %v",
			errName(rc.ErrorCode), rc.HighWatermark, rc.LastStableOffset, len(rc.RecordBatches), rc.AbortedTransactions)
	}
	ru := fetchAt(t, db.addr, tp, 0, 0)
	if ru.LastStableOffset != 0 || len(ru.RecordBatches) == 0 || ru.AbortedTransactions != nil {
		t.Fatalf("read_uncommitted: LSO %d, %d record bytes, aborted %v", ru.LastStableOffset, len(ru.RecordBatches), ru.AbortedTransactions)
	}
	if st := p.Status(); st.HighWatermark-st.LastStableOffset != 3 {
		t.Fatalf("LastStableOffsetLag during the transaction: HW %d LSO %d", st.HighWatermark, st.LastStableOffset)
	}
	if got := listLatestOffset(t, db.addr, "txn", 1); got != 0 {
		t.Fatalf("ListOffsets latest read_committed: %d, want the LSO 0", got)
	}
	if got := listLatestOffset(t, db.addr, "txn", 0); got != 3 {
		t.Fatalf("ListOffsets latest read_uncommitted: %d, want 3", got)
	}

	if code := markerErr(t, request[*kmsg.WriteTxnMarkersResponse](t, cl, writeMarkersReq(pid, 2, false, 7, "txn", 0))); code != 0 {
		t.Fatalf("abort marker: %s", errName(code))
	}
	rc = fetchAt(t, db.addr, tp, 0, 1)
	if rc.LastStableOffset != 4 || len(rc.RecordBatches) == 0 || len(rc.AbortedTransactions) != 1 ||
		rc.AbortedTransactions[0].ProducerID != pid || rc.AbortedTransactions[0].FirstOffset != 0 {
		t.Fatalf("read_committed after the abort: LSO %d, %d record bytes, aborted %+v", rc.LastStableOffset, len(rc.RecordBatches), rc.AbortedTransactions)
	}
	if got := listLatestOffset(t, db.addr, "txn", 1); got != 4 {
		t.Fatalf("ListOffsets latest read_committed after the marker: %d", got)
	}

	dp := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = "txn", []int32{0}
	dp.Topics = append(dp.Topics, dt)
	prods := request[*kmsg.DescribeProducersResponse](t, cl, dp).Topics[0].Partitions[0].ActiveProducers
	if len(prods) != 1 || prods[0].ProducerID != pid || prods[0].CoordinatorEpoch != 7 || prods[0].CurrentTxnStartOffset != -1 {
		t.Fatalf("DescribeProducers: %+v", prods)
	}

	for _, tc := range []struct {
		name string
		req  *kmsg.WriteTxnMarkersRequest
		want error
	}{
		{"stale coordinator", writeMarkersReq(pid, 2, true, 6, "txn", 0), kerr.TransactionCoordinatorFenced},
		{"stale producer epoch", writeMarkersReq(pid, 1, true, 7, "txn", 0), kerr.InvalidProducerEpoch},
		{"unknown topic", writeMarkersReq(pid, 2, true, 7, "ghost", 0), kerr.UnknownTopicOrPartition},
		{"unknown partition", writeMarkersReq(pid, 2, true, 7, "txn", 5), kerr.UnknownTopicOrPartition},
	} {
		if code := markerErr(t, request[*kmsg.WriteTxnMarkersResponse](t, cl, tc.req)); code != tc.want.(*kerr.Error).Code {
			t.Errorf("%s: %s, want %v", tc.name, errName(code), tc.want)
		}
	}
}

// A read_committed long-poll waits for the last stable offset, not the
// high watermark: a plain record behind an open transaction does not
// answer it, the marker does.
func TestReadCommittedLongPollWaitsForTheMarker(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "lp", 1, nil)
	cl := db.client(t)
	p := db.b.partition("lp", 0)
	b, err := logstore.EncodeBatch(logstore.BatchOptions{PartitionLeaderEpoch: -1, ProducerID: 5000, BaseSequence: 0, Transactional: true},
		[]logstore.Record{{Key: []byte("k"), Value: []byte("v"), Timestamp: time.Now().UnixMilli()}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendAsLeader([]logstore.Batch{b}, 1, replica.AppendRules{LogAppendTime: -1, VerificationGuard: verifiedGuard(t, p, 5000)}); err != nil {
		t.Fatal(err)
	}
	got := make(chan kmsg.FetchResponseTopicPartition, 1)
	go func() {
		req := fetchReq(tp, 0, 0, 10_000, 1)
		req.IsolationLevel = 1
		got <- rawRequest(t, db.addr, req, 11).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	}()
	time.Sleep(300 * time.Millisecond)
	produceRaw(t, cl, "lp", 0, 1, rawBatch(t, plainOpts(), 1, time.Now().UnixMilli()))
	select {
	case r := <-got:
		t.Fatalf("answered before the marker: LSO %d, %d bytes", r.LastStableOffset, len(r.RecordBatches))
	case <-time.After(300 * time.Millisecond):
	}
	if code := markerErr(t, request[*kmsg.WriteTxnMarkersResponse](t, cl, writeMarkersReq(5000, 0, true, 0, "lp", 0))); code != 0 {
		t.Fatalf("commit marker: %s", errName(code))
	}
	select {
	case r := <-got:
		if r.LastStableOffset != 3 || len(r.RecordBatches) == 0 || len(r.AbortedTransactions) != 0 {
			t.Fatalf("after the commit: LSO %d, %d bytes, aborted %+v", r.LastStableOffset, len(r.RecordBatches), r.AbortedTransactions)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read_committed long-poll was not answered after the marker")
	}
}

// verifiedGuard stands in for the transaction coordinator's confirmation
// (KIP-890) of a transaction's first batch on p.
func verifiedGuard(t *testing.T, p *replica.Partition, producerID int64) uint64 {
	t.Helper()
	v, err := p.StartTxnVerification(producerID)
	if err != nil || !v.Needed {
		t.Fatalf("StartTxnVerification: %+v %v", v, err)
	}
	return v.Guard
}
