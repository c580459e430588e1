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

// BenchmarkProduceWaitCommit measures an acks=-1 produce on a leader with
// one follower: append, park, the follower's fetch moves the HW, answer.
func BenchmarkProduceWaitCommit(b *testing.B) {
	l, err := logstore.OpenFileLog(filepath.Join(b.TempDir(), "bench-0"), logstore.DefaultConfig(), logstore.FileLogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	delayed := newDelayedOps(nil)
	p := replica.New("bench", 0, [16]byte{1}, l, 0, replica.Options{LocalID: 0, ReplicaLagTimeMax: time.Minute, MinInsyncReplicas: 2, Delayed: delayed})
	p.BecomeLeader(replica.LeaderAndIsr{Leader: 0, LeaderEpoch: 1, Isr: []int32{0, 1}, Replicas: []int32{0, 1}})
	raw := benchBatch(b, plainOpts())
	batches, err := logstore.ParseBatches(raw)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		info, err := p.AppendAsLeader(batches, 1, replica.AppendRules{LogAppendTime: -1})
		if err != nil {
			b.Fatal(err)
		}
		resp := kmsg.NewPtrProduceResponse()
		resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "bench", Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
		r := produceWait(delayed, resp, []producePending{{p: p, requiredOffset: info.LastOffset + 1}}, 10*time.Second, produceHints{})
		done := make(chan int16, 1)
		go func() { done <- r.Wait(ctx).Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode }()
		if _, _, _, err := p.ReadForFollower(1, info.LastOffset+1, 0, -1, 1<<20, true, true); err != nil {
			b.Fatal(err)
		}
		if code := <-done; code != 0 {
			b.Fatal(errName(code))
		}
	}
}
