package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/compat/harness"
)

// Committed offsets live in __consumer_offsets, replicated like any topic:
// SIGKILL the group's coordinator and the new leader of its offsets
// partition serves the same committed offsets, and a consumer of the
// group resumes from them.
func TestGroupCoordinatorFailover(t *testing.T) {
	c := harness.StartCluster(t, 3)
	const topic, group, n = "grp", "grp-g", 300
	createTopic(t, c, topic, 3, 3, minISR2)
	waitLeaders(t, c, topic, 3)

	prod := newClient(t, c.Addrs(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic))
	for i := 0; i < n; i++ {
		if err := prod.ProduceSync(testCtx(t, 30*time.Second), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}

	cons := newClient(t, c.Addrs(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	seen := 0
	ctx := testCtx(t, 90*time.Second)
	for seen < n {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", seen, n)
		}
		fs.EachRecord(func(*kgo.Record) { seen++ })
	}
	if err := cons.CommitUncommittedOffsets(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cons.Close()

	adm := kadm.NewClient(newClient(t, c.Addrs()))
	before := fetchCommitted(t, adm, group)
	if total := sum(before); total != n {
		t.Fatalf("committed offsets %v sum to %d, want %d", before, total, n)
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = group
	fresp, err := fc.RequestWith(testCtx(t, 30*time.Second), newClient(t, c.Addrs()))
	if err != nil || fresp.ErrorCode != 0 {
		t.Fatalf("FindCoordinator: %v %+v", err, fresp)
	}
	coord := fresp.NodeID
	c.Broker(coord).Kill()
	t.Logf("SIGKILL coordinator %d", coord)

	// A fresh client each time: a client that knew the dead coordinator
	// keeps dialling it until its own metadata refresh (a kgo behaviour,
	// the same against Kafka).
	waitUntil(t, sessionTimeout+45*time.Second, "offsets served by a new coordinator", func() error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
		if err != nil {
			return err
		}
		defer cl.Close()
		got, err := kadm.NewClient(cl).FetchOffsets(testCtx(t, 10*time.Second), group)
		if err != nil {
			return err
		}
		if err := got.Error(); err != nil {
			return err
		}
		after := map[int32]int64{}
		got.Each(func(o kadm.OffsetResponse) { after[o.Partition] = o.At })
		for p, at := range before {
			if after[p] != at {
				return fmt.Errorf("partition %d committed %d after failover, %d before", p, after[p], at)
			}
		}
		return nil
	})

	// A member of the group resumes from the commits: nothing is left.
	more := newClient(t, c.Addrs(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err := prod.ProduceSync(testCtx(t, 60*time.Second), kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatalf("produce after failover: %v", err)
	}
	ctx = testCtx(t, 90*time.Second)
	for {
		fs := more.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("the resumed consumer got nothing")
		}
		var vals []string
		fs.EachRecord(func(r *kgo.Record) { vals = append(vals, string(r.Value)) })
		if len(vals) == 0 {
			continue
		}
		if len(vals) != 1 || vals[0] != "after" {
			t.Fatalf("resumed consumer read %d records %q..., want only the new one", len(vals), vals[0])
		}
		return
	}
}

func fetchCommitted(t *testing.T, adm *kadm.Client, group string) map[int32]int64 {
	t.Helper()
	got, err := adm.FetchOffsets(testCtx(t, 30*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	got.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
	return out
}

func sum(m map[int32]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}
