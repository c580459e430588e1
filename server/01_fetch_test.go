package server

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/protocol"
)

func fetchReq(tp *Topic, partition int32, offset int64, maxWait, minBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWait, minBytes, 50<<20
	req.SessionEpoch = -1 // sessionless
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = tp.Name, tp.ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestFetchLongPollWakesOnProduce(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "poll", 1, nil)
	cl := db.client(t)
	type result struct {
		resp *kmsg.FetchResponse
		at   time.Time
	}
	got := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r, err := cl.SeedBrokers()[0].Request(ctx, fetchReq(tp, 0, 0, 10_000, 1))
		if err != nil {
			got <- result{}
			return
		}
		got <- result{r.(*kmsg.FetchResponse), time.Now()}
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-got:
		t.Fatal("fetch answered before any data arrived despite max_wait 10s")
	default:
	}
	produced := time.Now()
	if r := produceRaw(t, cl, "poll", 0, 1, rawBatch(t, plainOpts(), 2, produced.UnixMilli())); r.ErrorCode != 0 {
		t.Fatal(errName(r.ErrorCode))
	}
	var res result
	select {
	case res = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("long poll never answered")
	}
	if res.resp == nil {
		t.Fatal("fetch failed")
	}
	if d := res.at.Sub(produced); d > 5*time.Second {
		t.Fatalf("long poll woke %v after the produce; it should wake on the append, not the timeout", d)
	}
	p := res.resp.Topics[0].Partitions[0]
	batches, err := logstore.ParseBatches(p.RecordBatches)
	if p.ErrorCode != 0 || err != nil || len(batches) != 1 || p.HighWatermark != 2 {
		t.Fatalf("error %s, %d batches (%v), HW %d", errName(p.ErrorCode), len(batches), err, p.HighWatermark)
	}
}

func TestFetchLongPollTimesOut(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "quiet", 1, nil)
	cl := db.client(t)
	start := time.Now()
	resp := request[*kmsg.FetchResponse](t, cl, fetchReq(tp, 0, 0, 300, 1))
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("answered after %v, before max_wait", d)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 {
		t.Fatalf("empty fetch: %s with %d bytes", errName(p.ErrorCode), len(p.RecordBatches))
	}
}

func TestFetchErrors(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "fe", 1, nil)
	cl := db.client(t)
	produceRaw(t, cl, "fe", 0, 1, rawBatch(t, plainOpts(), 3, time.Now().UnixMilli()))

	unknown := &Topic{Name: "ghost", ID: [16]byte{9, 9, 9}}
	if p := request[*kmsg.FetchResponse](t, cl, fetchReq(unknown, 0, 0, 0, 0)).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: %s", errName(p.ErrorCode))
	}
	old := db.pinnedFetch(t, 12)
	if p := request[*kmsg.FetchResponse](t, old, fetchReq(unknown, 0, 0, 0, 0)).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown topic name (v12): %s", errName(p.ErrorCode))
	}
	if p := request[*kmsg.FetchResponse](t, old, fetchReq(tp, 0, 0, 0, 0)).Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch by name (v12): %s", errName(p.ErrorCode))
	}
	if p := request[*kmsg.FetchResponse](t, cl, fetchReq(tp, 0, 4, 0, 0)).Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("offset past the end: %s", errName(p.ErrorCode))
	}
	req := fetchReq(tp, 0, 0, 0, 0)
	req.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
	if p := request[*kmsg.FetchResponse](t, cl, req).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("newer leader epoch: %s", errName(p.ErrorCode))
	}
}

func (db *dataBroker) pinnedFetch(t *testing.T, v int16) *kgo.Client {
	ab := &adminBroker{addr: db.addr}
	return ab.pinned(t, kmsg.Fetch.Int16(), v)
}

// TestFetchMaxBytes checks KIP-74: the first partition with data gets a
// whole batch even beyond the limits; later partitions only what fits.
func TestFetchMaxBytes(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "big", 2, nil)
	cl := db.client(t)
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 3; i++ {
			recs := rawBatch(t, plainOpts(), 400, time.Now().UnixMilli())
			if r := produceRaw(t, cl, "big", p, 1, recs); r.ErrorCode != 0 {
				t.Fatal(errName(r.ErrorCode))
			}
		}
	}
	req := fetchReq(tp, 0, 0, 0, 0)
	rp1 := req.Topics[0].Partitions[0]
	rp1.Partition = 1
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, rp1)
	req.MaxBytes = 10
	req.Topics[0].Partitions[0].PartitionMaxBytes = 10
	resp := request[*kmsg.FetchResponse](t, cl, req)
	ps := resp.Topics[0].Partitions
	b0, err := logstore.ParseBatches(ps[0].RecordBatches)
	if err != nil || len(b0) != 1 {
		t.Fatalf("first partition: %d batches (%v), want exactly one oversized batch", len(b0), err)
	}
	if len(ps[1].RecordBatches) != 0 || ps[1].HighWatermark != 1200 {
		t.Fatalf("second partition: %d bytes, HW %d; want none past max_bytes, with its HW", len(ps[1].RecordBatches), ps[1].HighWatermark)
	}
}

// TestFetchSessionIncremental opens a session, then checks that an
// incremental fetch carries only partitions with news.
func TestFetchSessionIncremental(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "sess", 2, nil)
	cl := db.client(t)
	produceRaw(t, cl, "sess", 0, 1, rawBatch(t, plainOpts(), 2, time.Now().UnixMilli()))

	full := fetchReq(tp, 0, 0, 0, 0)
	full.SessionEpoch = 0
	rp1 := full.Topics[0].Partitions[0]
	rp1.Partition = 1
	full.Topics[0].Partitions = append(full.Topics[0].Partitions, rp1)
	resp := request[*kmsg.FetchResponse](t, cl, full)
	if resp.SessionID == 0 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("full fetch: session %d, %d partitions", resp.SessionID, len(resp.Topics[0].Partitions))
	}
	sid := resp.SessionID

	inc := kmsg.NewPtrFetchRequest()
	inc.SessionID, inc.SessionEpoch, inc.MaxBytes = sid, 1, 1<<20
	// Partition 0 moves past its data; partition 1 is unchanged.
	it := kmsg.NewFetchRequestTopic()
	it.TopicID = tp.ID
	ip := kmsg.NewFetchRequestTopicPartition()
	ip.Partition, ip.FetchOffset, ip.PartitionMaxBytes = 0, 2, 1<<20
	it.Partitions = append(it.Partitions, ip)
	inc.Topics = append(inc.Topics, it)
	resp = request[*kmsg.FetchResponse](t, cl, inc)
	if resp.ErrorCode != 0 || resp.SessionID != sid || len(resp.Topics) != 0 {
		t.Fatalf("incremental with no news: error %s, session %d, %d topics", errName(resp.ErrorCode), resp.SessionID, len(resp.Topics))
	}

	produceRaw(t, cl, "sess", 1, 1, rawBatch(t, plainOpts(), 1, time.Now().UnixMilli()))
	inc.SessionEpoch = 2
	inc.Topics = nil
	resp = request[*kmsg.FetchResponse](t, cl, inc)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].Partition != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("incremental after a produce to partition 1: %+v", resp.Topics)
	}

	resp = request[*kmsg.FetchResponse](t, cl, inc) // epoch 2 again
	if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("replayed epoch: %s", errName(resp.ErrorCode))
	}
	inc.SessionID, inc.SessionEpoch = sid+1, 1
	resp = request[*kmsg.FetchResponse](t, cl, inc)
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: %s", errName(resp.ErrorCode))
	}
}

// TestFetchLargeAnswerIsAFrame checks that a large answer leaves as a
// zero-copy frame and that a client decodes it to the log's bytes.
func TestFetchLargeAnswerIsAFrame(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	tp := db.mustCreate(t, "large", 1, nil)
	cl := db.client(t)
	for i := 0; i < 4; i++ {
		recs := make([]logstore.Record, 100)
		for j := range recs {
			recs[j] = logstore.Record{Value: make([]byte, 100), Timestamp: time.Now().UnixMilli()}
		}
		bt, err := logstore.EncodeBatch(plainOpts(), recs)
		if err != nil {
			t.Fatal(err)
		}
		if r := produceRaw(t, cl, "large", 0, 1, bt.Raw); r.ErrorCode != 0 {
			t.Fatal(errName(r.ErrorCode))
		}
	}
	req := fetchReq(tp, 0, 0, 0, 0)
	req.SetVersion(16)
	direct := handleFetch(db.b, context.Background(), &protocol.Request{Key: 1, Version: 16, Body: req})
	if direct.Frame == nil || direct.Frame.Len() < copyThreshold {
		t.Fatalf("a %d-byte answer should be a frame: %+v", copyThreshold, direct)
	}
	resp := request[*kmsg.FetchResponse](t, cl, fetchReq(tp, 0, 0, 0, 0))
	rr, err := db.b.partition("large", 0).Log().Read(0, 400, 1<<30, true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rr.Bytes()
	if got := resp.Topics[0].Partitions[0].RecordBatches; !bytes.Equal(got, want) {
		t.Fatalf("fetched %d bytes differing from the log's %d", len(got), len(want))
	}
}
