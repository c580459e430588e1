package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

var delayedT0 = time.Unix(1_700_000_000, 0)

// countingDelayed counts the checks partitions asked for, so that a test
// can tell a wait that was re-checked from one nobody looked at.
type countingDelayed struct {
	*delayedOps
	checks int
}

func (c *countingDelayed) CheckAndComplete(p *replica.Partition) int {
	c.checks++
	return c.delayedOps.CheckAndComplete(p)
}

// replicatedLeader is partition t-0 led by broker 0 with followers 1 and 2
// in the ISR, on the fake clock.
func replicatedLeader(t *testing.T, clock *clocktest.Fake, delayed replica.DelayedOperations, minIsr int) *replica.Partition {
	t.Helper()
	p := replica.New("t", 0, [16]byte{7}, logtest.New(t, logstore.DefaultConfig()), 0, replica.Options{
		LocalID: 0, ReplicaLagTimeMax: 30 * time.Second, MinInsyncReplicas: minIsr, Now: clock.Now, Delayed: delayed,
	})
	if !p.BecomeLeader(replica.LeaderAndIsr{Leader: 0, LeaderEpoch: 1, Isr: []int32{0, 1, 2}, Replicas: []int32{0, 1, 2}}) {
		t.Fatal("BecomeLeader not applied")
	}
	return p
}

func appendBatch(t *testing.T, p *replica.Partition, records int) {
	t.Helper()
	if _, err := p.AppendAsLeader([]logstore.Batch{mustBatch(t, records)}, 1, replica.AppendRules{LogAppendTime: -1}); err != nil {
		t.Fatal(err)
	}
}

// followerFetch serves follower id's fetch from offset as the Fetch
// handler does: read (counting the fetch), then answer or wait.
func followerFetch(p *replica.Partition, delayed *delayedOps, id int32, offset int64, maxWait time.Duration) protocol.Response {
	plan := &fetchPlan{replicaID: id, version: 16, maxBytes: 50 << 20, minBytes: 1, full: true, parts: []*fetchPart{{
		sp: &sessionPartition{key: sessionKey{topicID: p.TopicID, partition: p.Index}},
		p:  p,
		fetchPosition: fetchPosition{
			fetchOffset: offset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1,
		},
	}}}
	if plan.read(true) >= plan.minBytes || plan.anyError() || plan.anyDiverging() {
		return plan.answer()
	}
	return plan.wait(delayed, maxWait)
}

func runWait(t *testing.T, r protocol.Response) <-chan protocol.Response {
	t.Helper()
	if r.Wait == nil {
		t.Fatal("the fetch must wait")
	}
	out := make(chan protocol.Response, 1)
	go func() { out <- r.Wait(context.Background()) }()
	return out
}

func answered(t *testing.T, out <-chan protocol.Response) *kmsg.FetchResponse {
	t.Helper()
	select {
	case r := <-out:
		return r.Msg.(*kmsg.FetchResponse)
	case <-time.After(5 * time.Second):
		t.Fatal("the fetch was not answered")
		return nil
	}
}

func notAnswered(t *testing.T, out <-chan protocol.Response) {
	t.Helper()
	select {
	case <-out:
		t.Fatal("answered early")
	case <-time.After(20 * time.Millisecond):
	}
}

func follower(t *testing.T, p *replica.Partition, id int32) replica.FollowerProgress {
	t.Helper()
	f, ok := p.Follower(id)
	if !ok {
		t.Fatalf("no follower %d", id)
	}
	return f
}

// A follower's fetch that waits in the purgatory is counted once, when it
// arrives (its LEO, fetch time and caught-up time), however often it is
// re-checked while it waits and when it is answered — by data or by its
// timeout — as Kafka's fetchMessages updates the follower's state on the
// first read only and DelayedFetch re-reads with readFromPurgatory.
func TestFollowerFetchWaitingInPurgatoryCountsOnce(t *testing.T) {
	clock := clocktest.NewFake(delayedT0)
	delayed := &countingDelayed{delayedOps: newDelayedOps(clock)}
	p := replicatedLeader(t, clock, delayed, 1)
	appendBatch(t, p, 2) // LEO 2; both followers at 0, so the HW stays 0

	// Follower 1 arrives caught up (offset 2 = the leader's LEO) at t0+1s
	// and waits for more.
	clock.Advance(time.Second)
	arrived := clock.Now()
	out := runWait(t, followerFetch(p, delayed.delayedOps, 1, 2, 500*time.Millisecond))
	want := follower(t, p, 1)
	if want.LogEndOffset != 2 || !want.LastFetchTime.Equal(arrived) || !want.LastCaughtUpTime.Equal(arrived) {
		t.Fatalf("on arrival: %+v", want)
	}

	// Follower 2 catches up 100ms later: the HW moves, which re-checks
	// follower 1's waiting fetch without completing it (nothing past 2).
	clock.Advance(100 * time.Millisecond)
	checks := delayed.checks
	if _, _, _, err := p.ReadForFollower(2, 2, 0, -1, 1<<20, true, true); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 2 || delayed.checks == checks {
		t.Fatalf("HW %d, checks %d→%d: the HW move must re-check the waiting fetch", p.HighWatermark(), checks, delayed.checks)
	}
	notAnswered(t, out)
	if got := follower(t, p, 1); got != want {
		t.Fatalf("a re-check counted the fetch again: %+v, want %+v", got, want)
	}

	// An append 100ms later answers it with the new batch; the answer's
	// read does not count either.
	clock.Advance(100 * time.Millisecond)
	appendBatch(t, p, 3)
	resp := answered(t, out)
	if rp := resp.Topics[0].Partitions[0]; rp.ErrorCode != 0 || len(rp.RecordBatches) == 0 {
		t.Fatalf("answer: %s, %d bytes", errName(rp.ErrorCode), len(rp.RecordBatches))
	}
	if got := follower(t, p, 1); got != want {
		t.Fatalf("answering counted the fetch again: %+v, want %+v", got, want)
	}

	// The next fetch counts, once, and one that times out counts once too.
	clock.Advance(time.Second)
	next := clock.Now()
	out = runWait(t, followerFetch(p, delayed.delayedOps, 1, 5, 500*time.Millisecond))
	want = follower(t, p, 1)
	if want.LogEndOffset != 5 || !want.LastFetchTime.Equal(next) || !want.LastCaughtUpTime.Equal(next) {
		t.Fatalf("next fetch: %+v", want)
	}
	clock.Advance(499 * time.Millisecond)
	notAnswered(t, out)
	clock.Advance(time.Millisecond)
	// The HW stays at 2 until follower 2 fetches past it.
	if rp := answered(t, out).Topics[0].Partitions[0]; rp.ErrorCode != 0 || len(rp.RecordBatches) != 0 || rp.HighWatermark != 2 {
		t.Fatalf("timed out answer: %s, %d bytes, HW %d", errName(rp.ErrorCode), len(rp.RecordBatches), rp.HighWatermark)
	}
	if got := follower(t, p, 1); got != want {
		t.Fatalf("the timeout counted the fetch again: %+v, want %+v", got, want)
	}
	if n := delayed.Watched(p); n != 0 || clock.Pending() != 0 {
		t.Fatalf("%d operations still watched, %d timers pending", n, clock.Pending())
	}
}

// A fetch waiting on a partition whose leadership moves is answered at
// once with NOT_LEADER_OR_FOLLOWER, not at its timeout.
func TestFetchWaitEndsOnLeadershipChange(t *testing.T) {
	clock := clocktest.NewFake(delayedT0)
	delayed := newDelayedOps(clock)
	p := replicatedLeader(t, clock, delayed, 1)
	out := runWait(t, followerFetch(p, delayed, 1, 0, 500*time.Millisecond))
	notAnswered(t, out)
	if !p.BecomeFollower(1, 2) {
		t.Fatal("BecomeFollower not applied")
	}
	if rp := answered(t, out).Topics[0].Partitions[0]; rp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("answer %s, want NOT_LEADER_OR_FOLLOWER", errName(rp.ErrorCode))
	}
	if clock.Pending() != 0 {
		t.Fatal("the timer survived the answer")
	}
}

// acks=-1 through the purgatory, deterministically: NONE once the HW
// passes the append, NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank
// below min.insync.replicas meanwhile, NOT_LEADER_OR_FOLLOWER when
// leadership moved, REQUEST_TIMED_OUT at the request's timeout.
func TestDelayedProduceOutcomes(t *testing.T) {
	newResp := func() *kmsg.ProduceResponse {
		resp := kmsg.NewPtrProduceResponse()
		resp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{}}}}
		return resp
	}
	wait := func(t *testing.T, r protocol.Response) <-chan protocol.Response {
		t.Helper()
		if r.Wait == nil {
			t.Fatal("an uncommitted append must wait")
		}
		out := make(chan protocol.Response, 1)
		go func() { out <- r.Wait(context.Background()) }()
		return out
	}
	code := func(t *testing.T, out <-chan protocol.Response) int16 {
		t.Helper()
		select {
		case r := <-out:
			return r.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
		case <-time.After(5 * time.Second):
			t.Fatal("not answered")
			return 0
		}
	}
	fetchBoth := func(t *testing.T, p *replica.Partition, offset int64) {
		t.Helper()
		for _, id := range []int32{1, 2} {
			if _, _, _, err := p.ReadForFollower(id, offset, 0, -1, 1<<20, true, true); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("committed", func(t *testing.T) {
		clock := clocktest.NewFake(delayedT0)
		delayed := newDelayedOps(clock)
		p := replicatedLeader(t, clock, delayed, 2)
		appendBatch(t, p, 2)
		out := wait(t, produceWait(delayed, newResp(), []producePending{{p: p, requiredOffset: 2}}, time.Second, produceHints{}))
		if _, _, _, err := p.ReadForFollower(1, 2, 0, -1, 1<<20, true, true); err != nil {
			t.Fatal(err)
		}
		select {
		case <-out:
			t.Fatal("answered with follower 2 behind")
		case <-time.After(20 * time.Millisecond):
		}
		fetchBoth(t, p, 2)
		if c := code(t, out); c != 0 {
			t.Fatalf("got %s", errName(c))
		}
	})
	t.Run("notEnoughReplicasAfterAppend", func(t *testing.T) {
		// The partition reports no changes here, so the verdict first runs
		// when the produce enters the purgatory — after the HW passed the
		// append and the ISR then shrank below min.insync.replicas (a
		// check at the HW move would have said NONE).
		clock := clocktest.NewFake(delayedT0)
		delayed := newDelayedOps(clock)
		p := replicatedLeader(t, clock, nil, 3)
		appendBatch(t, p, 2)
		fetchBoth(t, p, 2)
		appendBatch(t, p, 1) // follower 2 never fetches it
		clock.Advance(31 * time.Second)
		if _, _, _, err := p.ReadForFollower(1, 3, 0, -1, 1<<20, true, true); err != nil {
			t.Fatal(err)
		}
		p.MaybeShrinkIsr()
		if len(p.Isr()) != 2 || p.HighWatermark() != 2 {
			t.Fatalf("ISR %v, HW %d", p.Isr(), p.HighWatermark())
		}
		r := produceWait(delayed, newResp(), []producePending{{p: p, requiredOffset: 2}}, time.Minute, produceHints{})
		if r.Msg == nil {
			t.Fatal("a produce whose HW already passed must be answered at once")
		}
		if c := r.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; c != kerr.NotEnoughReplicasAfterAppend.Code {
			t.Fatalf("got %s, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", errName(c))
		}
	})
	t.Run("notLeader", func(t *testing.T) {
		clock := clocktest.NewFake(delayedT0)
		delayed := newDelayedOps(clock)
		p := replicatedLeader(t, clock, delayed, 2)
		appendBatch(t, p, 2)
		out := wait(t, produceWait(delayed, newResp(), []producePending{{p: p, requiredOffset: 2}}, time.Minute, produceHints{}))
		p.BecomeFollower(1, 2)
		if c := code(t, out); c != kerr.NotLeaderForPartition.Code {
			t.Fatalf("got %s", errName(c))
		}
	})
	t.Run("timedOut", func(t *testing.T) {
		clock := clocktest.NewFake(delayedT0)
		delayed := newDelayedOps(clock)
		p := replicatedLeader(t, clock, delayed, 2)
		appendBatch(t, p, 2)
		out := wait(t, produceWait(delayed, newResp(), []producePending{{p: p, requiredOffset: 2}}, 1500*time.Millisecond, produceHints{}))
		clock.Advance(1499 * time.Millisecond)
		select {
		case <-out:
			t.Fatal("answered before the timeout")
		case <-time.After(20 * time.Millisecond):
		}
		clock.Advance(time.Millisecond)
		if c := code(t, out); c != kerr.RequestTimedOut.Code {
			t.Fatalf("got %s", errName(c))
		}
		if delayed.Watched(p) != 0 {
			t.Fatal("still watched after the timeout")
		}
	})
}
