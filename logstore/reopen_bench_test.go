package logstore

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkReopenUnclean opens a log after a crash: an idempotent
// producer's 160,000 batches of 8 records (about 150 MB) in the active
// segment, all of it re-read, as after a SIGKILL late in a long chaos run.
func BenchmarkReopenUnclean(b *testing.B) {
	dir := b.TempDir() + "/t-0"
	l, err := OpenFileLog(dir, DefaultConfig(), FileLogOptions{CleanShutdown: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i := 0; i < 160000; i++ {
		recs := make([]Record, 8)
		for j := range recs {
			recs[j] = Record{Value: []byte(fmt.Sprintf("%0100d", i*8+j)), Timestamp: now}
		}
		bt, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: 7, ProducerEpoch: 0, BaseSequence: int32(i * 8)}, recs)
		if err != nil {
			b.Fatal(err)
		}
		bs, _ := ParseBatches(bt.Raw)
		if _, err := l.AppendAsLeader(bs, 0, -1); err != nil {
			b.Fatal(err)
		}
	}
	crash(l)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l2, err := OpenFileLog(dir, DefaultConfig(), FileLogOptions{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		crash(l2) // no clean-shutdown marker: the next open recovers again
		b.StartTimer()
	}
}
