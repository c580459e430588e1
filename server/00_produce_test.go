package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

// TestProduceConsumeAllCodecs round-trips records through franz-go's
// idempotent producer and its session-using consumer, once per codec.
func TestProduceConsumeAllCodecs(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			db.mustCreate(t, topic, 3, nil)
			prod := db.client(t, kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(topic))
			const n = 300
			var recs []*kgo.Record
			for i := 0; i < n; i++ {
				// Values large enough that fetch answers exceed copyThreshold
				// and go out as zero-copy frames.
				v := fmt.Sprintf("value-%04d-%s-%s", i, name, strings.Repeat("x", i%5*100))
				recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprint(i % 7)), Value: []byte(v)})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			cons := db.client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
			seen := map[string]bool{}
			for len(seen) < n {
				fs := cons.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					t.Fatalf("consumed %d of %d: %v", len(seen), n, err)
				}
				for _, e := range fs.Errors() {
					t.Fatalf("fetch error %s[%d]: %v", e.Topic, e.Partition, e.Err)
				}
				fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
			}
			for _, r := range recs {
				if !seen[string(r.Value)] {
					t.Fatalf("record %q not consumed", r.Value)
				}
			}
		})
	}
}

func TestProduceErrors(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	db.mustCreate(t, "small", 1, map[string]string{"max.message.bytes": "200"})
	db.mustCreate(t, "plain", 1, nil)
	cl := db.client(t)
	now := time.Now().UnixMilli()

	corrupt := rawBatch(t, plainOpts(), 1, now)
	corrupt[len(corrupt)-1] ^= 0xff
	txn := plainOpts()
	txn.ProducerID, txn.ProducerEpoch, txn.BaseSequence, txn.Transactional = 1, 0, 0, true
	two := append(rawBatch(t, plainOpts(), 1, now), rawBatch(t, plainOpts(), 1, now)...)

	cases := []struct {
		name    string
		topic   string
		acks    int16
		records []byte
		want    error
	}{
		{"unknown topic", "nope", 1, rawBatch(t, plainOpts(), 1, now), kerr.UnknownTopicOrPartition},
		{"bad crc", "plain", 1, corrupt, kerr.CorruptMessage},
		{"truncated", "plain", 1, rawBatch(t, plainOpts(), 1, now)[:30], kerr.CorruptMessage},
		{"two batches", "plain", 1, two, kerr.InvalidRecord},
		{"too large", "small", 1, rawBatch(t, plainOpts(), 50, now), kerr.MessageTooLarge},
		// Transactional records without a transactional id: Kafka's
		// handleProduceRequest refuses them before anything else, with or
		// without an authorizer.
		{"transactional", "plain", 1, rawBatch(t, txn, 1, now), kerr.TransactionalIDAuthorizationFailed},
	}
	for _, c := range cases {
		got := produceRaw(t, cl, c.topic, 0, c.acks, c.records)
		if got.ErrorCode != c.want.(*kerr.Error).Code {
			t.Errorf("%s: got %s, want %v", c.name, errName(got.ErrorCode), c.want)
		}
	}
	// franz-go rewrites acks, so invalid acks go over a raw connection.
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 2, 1000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "plain", Partitions: []kmsg.ProduceRequestTopicPartition{{Records: rawBatch(t, plainOpts(), 1, now)}}}}
	resp := rawRequest(t, db.addr, req, 8).(*kmsg.ProduceResponse)
	if got := resp.Topics[0].Partitions[0].ErrorCode; got != kerr.InvalidRequiredAcks.Code {
		t.Errorf("acks=2: got %s", errName(got))
	}
	// Message formats v0/v1 (Produce v0-2) are refused.
	req.Acks = 1
	resp = rawRequest(t, db.addr, req, 2).(*kmsg.ProduceResponse)
	if got := resp.Topics[0].Partitions[0].ErrorCode; got != kerr.UnsupportedVersion.Code {
		t.Errorf("produce v2: got %s", errName(got))
	}
	if leo := db.b.partition("plain", 0).LogEndOffset(); leo != 0 {
		t.Fatalf("refused batches were appended: log end offset %d", leo)
	}
}

func TestProduceTimestampRules(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	db.mustCreate(t, "lat", 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	db.mustCreate(t, "bounded", 1, map[string]string{
		"message.timestamp.before.max.ms": "60000", "message.timestamp.after.max.ms": "60000",
	})
	cl := db.client(t)
	before := time.Now().UnixMilli()
	got := produceRaw(t, cl, "lat", 0, -1, rawBatch(t, plainOpts(), 3, 5))
	if got.ErrorCode != 0 || got.LogAppendTime < before || got.LogAppendTime > time.Now().UnixMilli() {
		t.Fatalf("LogAppendTime topic: error %s, log append time %d (sent at %d)", errName(got.ErrorCode), got.LogAppendTime, before)
	}
	now := time.Now().UnixMilli()
	for _, c := range []struct {
		ts   int64
		want int16
	}{{now, 0}, {now - 3600_000, kerr.InvalidTimestamp.Code}, {now + 3600_000, kerr.InvalidTimestamp.Code}} {
		got := produceRaw(t, cl, "bounded", 0, 1, rawBatch(t, plainOpts(), 1, c.ts))
		if got.ErrorCode != c.want {
			t.Errorf("timestamp %+d ms from now: got %s", c.ts-now, errName(got.ErrorCode))
		}
		if got.ErrorCode == 0 && got.LogAppendTime != -1 {
			t.Errorf("CreateTime topic must answer log append time -1, got %d", got.LogAppendTime)
		}
	}
}

func TestProduceAcksZero(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	db.mustCreate(t, "a0", 1, nil)
	cl := db.client(t, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic("a0"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}, &kgo.Record{Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	p := db.b.partition("a0", 0)
	for p.LogEndOffset() < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("acks=0 records not appended: log end offset %d", p.LogEndOffset())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestIdempotentRetryAcrossRestart sends the same idempotent batch twice,
// then again after a restart: every answer is the original offset and the
// batch is in the log once.
func TestIdempotentRetryAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	db := startDataBroker(t, dir)
	db.mustCreate(t, "idem", 1, nil)
	cl := db.client(t)
	pid := request[*kmsg.InitProducerIDResponse](t, cl, kmsg.NewPtrInitProducerIDRequest())
	if pid.ErrorCode != 0 {
		t.Fatal(errName(pid.ErrorCode))
	}
	opts := logstore.BatchOptions{ProducerID: pid.ProducerID, ProducerEpoch: pid.ProducerEpoch}
	now := time.Now().UnixMilli()
	first := rawBatch(t, opts, 3, now)
	opts.BaseSequence = 3
	second := rawBatch(t, opts, 2, now)

	send := func(cl *kgo.Client, records []byte) kmsg.ProduceResponseTopicPartition {
		return produceRaw(t, cl, "idem", 0, -1, append([]byte(nil), records...))
	}
	if got := send(cl, first); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("first: %s at %d", errName(got.ErrorCode), got.BaseOffset)
	}
	if got := send(cl, second); got.ErrorCode != 0 || got.BaseOffset != 3 {
		t.Fatalf("second: %s at %d", errName(got.ErrorCode), got.BaseOffset)
	}
	if got := send(cl, first); got.ErrorCode != 0 || got.BaseOffset != 0 {
		t.Fatalf("retried first: %s at %d, want its original offset 0", errName(got.ErrorCode), got.BaseOffset)
	}
	opts.BaseSequence = 9
	if got := send(cl, rawBatch(t, opts, 1, now)); got.ErrorCode != kerr.OutOfOrderSequenceNumber.Code {
		t.Fatalf("gap: got %s", errName(got.ErrorCode))
	}
	opts.ProducerEpoch = pid.ProducerEpoch - 1
	opts.BaseSequence = 5
	if got := send(cl, rawBatch(t, opts, 1, now)); got.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("older epoch: got %s", errName(got.ErrorCode))
	}
	if leo := db.b.partition("idem", 0).LogEndOffset(); leo != 5 {
		t.Fatalf("log end offset %d, want 5", leo)
	}

	db.stop()
	db = startDataBroker(t, dir)
	cl = db.client(t)
	if got := send(cl, second); got.ErrorCode != 0 || got.BaseOffset != 3 {
		t.Fatalf("retried second after restart: %s at %d, want 3", errName(got.ErrorCode), got.BaseOffset)
	}
	if leo := db.b.partition("idem", 0).LogEndOffset(); leo != 5 {
		t.Fatalf("after restart: log end offset %d, want 5 (duplicate appended)", leo)
	}
	opts.ProducerEpoch, opts.BaseSequence = pid.ProducerEpoch, 5
	if got := send(cl, rawBatch(t, opts, 1, now)); got.ErrorCode != 0 || got.BaseOffset != 5 {
		t.Fatalf("next in sequence after restart: %s at %d", errName(got.ErrorCode), got.BaseOffset)
	}
}

// TestIdempotentProducerThroughKgo checks that franz-go's idempotent
// producer is accepted end to end (InitProducerId, sequences per batch).
func TestIdempotentProducerThroughKgo(t *testing.T) {
	db := startDataBroker(t, t.TempDir())
	db.mustCreate(t, "kidem", 1, nil)
	cl := db.client(t, kgo.DefaultProduceTopic("kidem"), kgo.ProducerLinger(0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 20; i++ {
		r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).First()
		if err != nil {
			t.Fatal(err)
		}
		if r.Offset != int64(i) || r.ProducerID < 0 {
			t.Fatalf("record %d at offset %d, producer id %d", i, r.Offset, r.ProducerID)
		}
	}
	dp := request[*kmsg.DescribeProducersResponse](t, cl, &kmsg.DescribeProducersRequest{
		Topics: []kmsg.DescribeProducersRequestTopic{{Topic: "kidem", Partitions: []int32{0}}},
	})
	ps := dp.Topics[0].Partitions[0]
	if ps.ErrorCode != 0 || len(ps.ActiveProducers) != 1 || ps.ActiveProducers[0].LastSequence != 19 {
		t.Fatalf("DescribeProducers: %s %+v", errName(ps.ErrorCode), ps.ActiveProducers)
	}
}

// TestProduceWaitForHighWatermark drives the acks=-1 second phase
// directly: standalone the high watermark follows every append, so a
// pending partition is simulated by requiring an offset not yet written.
func TestProduceWaitForHighWatermark(t *testing.T) {
	delayed := newDelayedOps(nil)
	p := replica.NewLeaderWith("w", 0, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0, delayed)
	newResp := func() *kmsg.ProduceResponse {
		resp := kmsg.NewPtrProduceResponse()
		resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "w", Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
		return resp
	}

	r := produceWait(delayed, newResp(), []producePending{{p: p, requiredOffset: 2}}, 5*time.Second, produceHints{})
	if r.Wait == nil {
		t.Fatal("an uncommitted append must wait")
	}
	done := make(chan protocol.Response, 1)
	go func() { done <- r.Wait(context.Background()) }()
	if _, err := p.AppendAsLeader([]logstore.Batch{mustBatch(t, 2)}, -1, replica.AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if code := got.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("committed append answered %s", errName(code))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end when the high watermark passed the offset")
	}

	start := time.Now()
	r = produceWait(delayed, newResp(), []producePending{{p: p, requiredOffset: 10}}, 100*time.Millisecond, produceHints{})
	got := r.Wait(context.Background())
	if code := got.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("never committed: %s", errName(code))
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Fatalf("timed out after %v, want the request's 100ms", d)
	}
	if r := produceWait(delayed, newResp(), nil, time.Second, produceHints{}); r.Msg == nil {
		t.Fatal("nothing pending must answer at once")
	}
}

func mustBatch(t *testing.T, n int) logstore.Batch {
	t.Helper()
	bt, err := logstore.EncodeBatch(plainOpts(), make([]logstore.Record, n))
	if err != nil {
		t.Fatal(err)
	}
	return bt
}
