package server

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// BenchmarkFetchWaitWake measures a consumer fetch that waits at the log
// end and is answered by the next append: park, wake, re-read, answer.
func BenchmarkFetchWaitWake(b *testing.B) {
	l, err := logstore.OpenFileLog(filepath.Join(b.TempDir(), "bench-0"), logstore.DefaultConfig(), logstore.FileLogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	delayed := newDelayedOps(nil)
	p := replica.NewLeaderWith("bench", 0, [16]byte{1}, l, 0, delayed)
	d := &dataPath{}
	raw := benchBatch(b, plainOpts())
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sp := &sessionPartition{key: sessionKey{topicID: [16]byte{1}, partition: 0}}
		plan := &fetchPlan{replicaID: -1, version: 16, maxBytes: 50 << 20, minBytes: 1, full: true, parts: []*fetchPart{{
			sp: sp, p: p, fetchPosition: fetchPosition{fetchOffset: p.LogEndOffset(), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1},
		}}}
		plan.read(true)
		r := plan.wait(delayed, 10*time.Second)
		done := make(chan *kmsg.FetchResponse, 1)
		go func() { done <- r.Wait(ctx).Msg.(*kmsg.FetchResponse) }()
		var pr kmsg.ProduceResponseTopicPartition
		if _, err := d.produceToPartition(p, raw, 11, 1, benchRules, 0, 1, &pr); err != nil {
			b.Fatal(err)
		}
		if resp := <-done; len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
			b.Fatal("woken without data")
		}
	}
}
