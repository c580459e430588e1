package logstore

import (
	"fmt"
	"testing"
	"time"
)

// mkBatch builds a produce-style batch of n records with timestamps ts,
// ts+1, ... and keys k<key0+i>, parsed the way the produce path gets it.
func mkBatch(t testing.TB, n int, ts int64, keys ...string) Batch {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Value: []byte(fmt.Sprintf("v%d-%d", ts, i)), Timestamp: ts + int64(i)}
		if i < len(keys) {
			recs[i].Key = []byte(keys[i])
			if keys[i] == "" {
				recs[i].Key = nil
			}
		}
	}
	return plainBatch(t, recs)
}

// plainBatch encodes recs as one batch without a producer, parsed as
// appends take it.
func plainBatch(t testing.TB, recs []Record) Batch {
	t.Helper()
	b, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ParseBatches(b.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return bs[0]
}

// tombstone builds a one-record batch with a null value.
func tombstone(t testing.TB, key string, ts int64) Batch {
	t.Helper()
	b, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: -1}, []Record{{Key: []byte(key), Timestamp: ts}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendN(t testing.TB, l Log, batches int, recs int, ts int64, epoch int32) {
	t.Helper()
	for i := 0; i < batches; i++ {
		if _, err := l.AppendAsLeader([]Batch{mkBatch(t, recs, ts+int64(i*recs))}, epoch, -1); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll reads from offset to the end and returns the batches.
func readBatches(t testing.TB, l Log, from, maxOffset int64, maxBytes int, minOne bool) []Batch {
	t.Helper()
	res, err := l.Read(from, maxOffset, maxBytes, minOne)
	if err != nil {
		t.Fatal(err)
	}
	data, err := res.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != res.Len() {
		t.Fatalf("Bytes gave %d bytes, Len %d", len(data), res.Len())
	}
	bs, err := ParseBatches(data)
	if err != nil {
		t.Fatalf("read result does not parse: %v", err)
	}
	return bs
}

// records decodes every record of the log: offset → value.
func logRecords(t testing.TB, l Log) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, b := range readBatches(t, l, l.LogStartOffset(), 1<<62, 1<<30, true) {
		recs, err := DecodeRecords(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			out[b.Header.BaseOffset+int64(r.OffsetDelta)] = string(r.Key) + "=" + string(r.Value)
		}
	}
	return out
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }
