package compat

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type ackedRecord struct {
	partition int32
	offset    int64
}

// TestSigkillMidProduce kills the broker while an acks=all producer is
// running, restarts it on the same log dir and requires every
// acknowledged record back at its acknowledged offset; then Kafka's
// DumpLogSegments must parse every segment the recovery left.
func TestSigkillMidProduce(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "crash"
	createTopic(t, b.Addr, topic, 3, nil)

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(2*time.Millisecond), kgo.RecordDeliveryTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[int]ackedRecord{}
	ctx, cancel := context.WithCancel(context.Background())
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for seq := 0; ctx.Err() == nil && seq < 5_000_000; seq++ {
			seq := seq
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(seq % 7)), Value: seqValue(seq)},
				func(r *kgo.Record, err error) {
					if err != nil {
						return
					}
					mu.Lock()
					acked[seq] = ackedRecord{r.Partition, r.Offset}
					mu.Unlock()
				})
		}
	}()
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	deadline := time.Now().Add(60 * time.Second)
	for count() < 20000 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	before := count()
	b.Kill()
	t.Logf("SIGKILL after %d acknowledged records", before)
	if before == 0 {
		t.Fatal("nothing was acknowledged before the kill")
	}
	cancel()
	<-produced
	closed := make(chan struct{})
	go func() { cl.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("producer client did not close within 60s of the kill")
	}

	b.Restart(t)
	mu.Lock()
	want := acked
	mu.Unlock()
	got := readToEnd(t, b.Addr, topic)
	missing := 0
	for seq, at := range want {
		v, ok := got[at]
		if !ok || v != string(seqValue(seq)) {
			if missing < 10 {
				t.Errorf("acknowledged record %d at partition %d offset %d: read back %q (present %v)",
					seq, at.partition, at.offset, v, ok)
			}
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged records lost or changed after SIGKILL and restart", missing, len(want))
	}
	if err := b.Term(); err != nil {
		t.Errorf("SIGTERM shutdown after recovery: %v", err)
	}
	dumpSegments(t, b.LogDir)
}

// readToEnd reads every partition of topic up to its current end offset
// and returns the values by position.
func readToEnd(t *testing.T, addr, topic string) map[ackedRecord]string {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	ends, err := newAdmin(t, addr).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset %s[%d]: %v", o.Topic, o.Partition, o.Err)
		}
		if o.Offset > 0 {
			remaining[o.Partition] = o.Offset
		}
	})
	got := map[ackedRecord]string{}
	if len(remaining) == 0 {
		return got
	}
	cl := newClient(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for len(remaining) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s to its end: still missing %v", topic, remaining)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Errorf("fetch %s[%d]: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			got[ackedRecord{r.Partition, r.Offset}] = string(r.Value)
			if end, ok := remaining[r.Partition]; ok && r.Offset+1 >= end {
				delete(remaining, r.Partition)
			}
		})
	}
	return got
}
