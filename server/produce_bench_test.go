package server

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

func benchPartition(b *testing.B) *replica.Partition {
	b.Helper()
	l, err := logstore.OpenFileLog(filepath.Join(b.TempDir(), "bench-0"), logstore.DefaultConfig(), logstore.FileLogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return replica.NewLeader("bench", 0, [16]byte{1}, l, 0)
}

func benchBatch(b *testing.B, opts logstore.BatchOptions) []byte {
	recs := make([]logstore.Record, 100)
	for i := range recs {
		recs[i] = logstore.Record{Value: make([]byte, 100), Timestamp: 1}
	}
	bt, err := logstore.EncodeBatch(opts, recs)
	if err != nil {
		b.Fatal(err)
	}
	return bt.Raw
}

var benchRules = produceRules{maxMessageBytes: 1 << 20, beforeMaxMs: math.MaxInt64, afterMaxMs: math.MaxInt64}

// BenchmarkProduceAppend measures one partition's produce path: batch
// validation, producer-state check and the append to a FileLog.
func BenchmarkProduceAppend(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		p := benchPartition(b)
		d := &dataPath{}
		raw := benchBatch(b, plainOpts())
		b.SetBytes(int64(len(raw)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			var sp kmsg.ProduceResponseTopicPartition
			if _, err := d.produceToPartition(p, raw, 11, -1, benchRules, 0, 1, &sp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("idempotent", func(b *testing.B) {
		p := benchPartition(b)
		d := &dataPath{}
		// Batches are prepared ahead in rounds, since the sequence is
		// inside the CRC; each round is a new producer id.
		const round = 256
		batches := make([][]byte, round)
		b.SetBytes(int64(len(benchBatch(b, plainOpts()))))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%round == 0 {
				b.StopTimer()
				for j := range batches {
					batches[j] = benchBatch(b, logstore.BatchOptions{ProducerID: int64(i / round), BaseSequence: int32(j * 100)})
				}
				b.StartTimer()
			}
			var sp kmsg.ProduceResponseTopicPartition
			if _, err := d.produceToPartition(p, batches[i%round], 11, -1, benchRules, 0, 1, &sp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkFetchRead measures a consumer fetch of ~1 MiB from a FileLog:
// read, encode with placeholders and write (to io.Discard, so this is the
// user-space part of the zero-copy path).
func BenchmarkFetchRead(b *testing.B) {
	p := benchPartition(b)
	d := &dataPath{}
	raw := benchBatch(b, plainOpts())
	for i := 0; i < 200; i++ {
		var sp kmsg.ProduceResponseTopicPartition
		if _, err := d.produceToPartition(p, raw, 11, -1, benchRules, 0, 1, &sp); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var total int64
	for i := 0; i < b.N; i++ {
		sp := &sessionPartition{key: sessionKey{topicID: [16]byte{1}, partition: 0}}
		plan := &fetchPlan{replicaID: -1, version: 16, maxBytes: 50 << 20, full: true, parts: []*fetchPart{{
			sp: sp, p: p, fetchPosition: fetchPosition{fetchOffset: int64(i % 100 * 100), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1},
		}}}
		plan.read(true)
		resp := plan.answer()
		if resp.Frame == nil {
			b.Fatal("want a frame")
		}
		n, err := resp.Frame.WriteTo(discard{})
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	b.SetBytes(total / int64(b.N))
}

// discard is io.Discard without ReaderFrom, so file data is really read.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
