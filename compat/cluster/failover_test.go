package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 3 acceptance: SIGKILL the controller; another broker takes over
// within zookeeper.session.timeout.ms + 5 s with a higher epoch, and topic
// creation works again.
func TestControllerFailover(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	old := waitController(t, conn, 30*time.Second, anyBroker)
	epoch0, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}

	c.Broker(old).Kill()
	killed := time.Now()
	next := waitController(t, conn, sessionTimeout+5*time.Second, func(id int32) bool { return id != old })
	t.Logf("controller %d killed; broker %d took over after %v", old, next, time.Since(killed).Round(time.Millisecond))
	epoch1, err := controllerEpoch(conn)
	if err != nil {
		t.Fatal(err)
	}
	if epoch1 <= epoch0 {
		t.Fatalf("/controller_epoch %d after failover, was %d: want it to grow", epoch1, epoch0)
	}

	// The survivors learn of the new controller and drop the dead broker.
	c.WaitReady(t)
	waitUntil(t, 10*time.Second, "Metadata names the new controller", func() error {
		for _, b := range c.Brokers {
			if !b.Running() {
				continue
			}
			resp, err := harness.MetadataFrom(testCtx(t, 5*time.Second), b.Addr, "__none__")
			if err != nil {
				return err
			}
			if resp.ControllerID != next {
				return fmt.Errorf("broker %d names controller %d", b.ID, resp.ControllerID)
			}
		}
		return nil
	})

	// Topic creation goes through the new controller, with the stock tool
	// and with kadm.
	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-topics",
		"--bootstrap-server", strings.Join(c.Addrs(), ","), "--create", "--topic", "after-failover",
		"--replication-factor", "2", "--partitions", "4")
	if err != nil {
		t.Fatalf("kafka-topics --create after failover: %v\n%s\n%s", err, out, stderr)
	}
	waitLeaders(t, c, "after-failover", 4)
	createTopic(t, c, "after-failover-kadm", 2, 2, nil)
	assignment, err := topicAssignment(conn, "after-failover")
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range assignment {
		if slices.Contains(rs, old) {
			t.Errorf("partition %d assigned to dead broker %d: %v", p, old, rs)
		}
	}
}

// Issue 3 acceptance: SIGKILL a broker that leads partitions; each gets a
// new leader from its ISR with a higher leader epoch, and producers (franz-go
// acks=1 and acks=all, the console producer) carry on after a retry.
func TestLeaderFailover(t *testing.T) {
	const topic, partitions, witnessPerPartition = "failover", 6, 5
	c, conn := startWithTopic(t, topic, partitions)

	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	before := mustStates(t, conn, topic, partitions)
	// Kill a leader that is not the controller, so this test sees the
	// broker-failure election rather than a controller failover.
	victim := leaderNotController(t, c, before, ctrl)
	led := partitionsLedBy(before, victim)
	t.Logf("killing broker %d, leader of %v (controller %d)", victim, led, ctrl)

	// A producer runs across the kill: its records must all land once
	// the new leaders are known.
	survivors := func() []string {
		var out []string
		for _, b := range c.Brokers {
			if b.ID != victim {
				out = append(out, b.Addr)
			}
		}
		return out
	}()
	allAcks := newClient(t, survivors, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(45*time.Second))
	oneAck := newClient(t, survivors, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.RecordDeliveryTimeout(45*time.Second))
	produceN(t, allAcks, "before", 60)
	// The witness writes 5 records to every partition before the kill and
	// nothing after: what a new leader knows of it came from replication.
	witness := newClient(t, survivors, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	var witnessRecs []*kgo.Record
	for p := range int32(partitions) {
		for i := range witnessPerPartition {
			witnessRecs = append(witnessRecs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "witness-%d-%d", p, i)})
		}
	}
	if err := witness.ProduceSync(testCtx(t, 60*time.Second), witnessRecs...).FirstErr(); err != nil {
		t.Fatalf("witness produce: %v", err)
	}
	wid, wepoch, err := witness.ProducerID(testCtx(t, 10*time.Second))
	if err != nil {
		t.Fatalf("witness producer id: %v", err)
	}

	c.Broker(victim).Kill()
	ctx := testCtx(t, 60*time.Second)
	var during []*kgo.Record
	for i := range 60 {
		during = append(during, &kgo.Record{Value: fmt.Appendf(nil, "during-%d", i), Partition: int32(i % partitions)})
	}
	produced := allAcks.ProduceSync(ctx, during...)

	waitUntil(t, sessionTimeout+15*time.Second, "new leaders from the ISR with bumped epochs", func() error {
		now, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for _, p := range led {
			b, a := before[p], now[p]
			if a.Leader == victim || a.Leader < 0 {
				return fmt.Errorf("partition %d still led by %d", p, a.Leader)
			}
			if !slices.Contains(b.ISR, a.Leader) {
				return fmt.Errorf("partition %d: new leader %d not from the old ISR %v", p, a.Leader, b.ISR)
			}
			if a.LeaderEpoch <= b.LeaderEpoch {
				return fmt.Errorf("partition %d: leader epoch %d, was %d", p, a.LeaderEpoch, b.LeaderEpoch)
			}
			if slices.Contains(a.ISR, victim) {
				return fmt.Errorf("partition %d: dead broker %d still in ISR %v", p, victim, a.ISR)
			}
		}
		return checkMetadataMatchesState(c, conn, topic, partitions)
	})
	if err := produced.FirstErr(); err != nil {
		t.Fatalf("franz-go acks=all records produced across the kill: %v", err)
	}
	produceN(t, allAcks, "after-all", 60)
	produceN(t, oneAck, "after-one", 60)

	var lines strings.Builder
	for i := range 20 {
		fmt.Fprintf(&lines, "console-%d\n", i)
	}
	out, stderr, err := harness.RunToolInput(t, testCtx(t, 2*time.Minute), strings.NewReader(lines.String()),
		"kafka-console-producer", "--bootstrap-server", strings.Join(survivors, ","), "--topic", topic,
		"--producer-property", "acks=all")
	if err != nil || strings.Contains(stderr, "ERROR") {
		t.Fatalf("kafka-console-producer after failover: %v\n%s\n%s", err, out, stderr)
	}

	// Every record is readable once.
	want := 60 + 60 + 60 + 60 + 20 + witnessPerPartition*partitions
	got := consumeAll(t, survivors, topic, want, 60*time.Second)
	counts := map[string]int{}
	for _, r := range got {
		counts[string(r.Value)]++
	}
	for v, n := range counts {
		if n != 1 {
			t.Errorf("record %q read %d times", v, n)
		}
	}
	for _, prefix := range []string{"before-", "during-", "after-all-", "after-one-", "console-"} {
		n := 0
		for v := range counts {
			if strings.HasPrefix(v, prefix) {
				n++
			}
		}
		if wantN := map[bool]int{true: 20, false: 60}[prefix == "console-"]; n != wantN {
			t.Errorf("%s*: read %d distinct records, want %d", prefix, n, wantN)
		}
	}

	// Issue 10: a new leader knows idempotent producers from the batches it
	// replicated as a follower, with no rebuild: on every partition the
	// killed broker led, DescribeProducers (answered by the new leader)
	// lists the witness, which wrote there only before the kill, at its
	// last sequence, and the acks=all producer under its first id and
	// epoch with the last sequence of every record it wrote there, before,
	// across and after the failover. A sequence the new leader had refused
	// would have made franz-go reset its id, and the counts would not
	// match.
	ctx = testCtx(t, 30*time.Second)
	pid, pepoch, err := allAcks.ProducerID(ctx)
	if err != nil {
		t.Fatalf("producer id: %v", err)
	}
	wrote := map[int32]int32{}
	for _, r := range got {
		v := string(r.Value)
		if strings.HasPrefix(v, "before-") || strings.HasPrefix(v, "during-") || strings.HasPrefix(v, "after-all-") {
			wrote[r.Partition]++
		}
	}
	// A client of its own, asking until every leader it maps answers: a
	// client's cached leaders can still name the killed broker for a few
	// seconds after a failover this fast, and a request sent there fails
	// to dial rather than being redirected.
	admin := kadm.NewClient(newClient(t, survivors))
	var described kadm.DescribedProducersTopics
	waitUntil(t, 20*time.Second, "DescribeProducers answered by the live leaders", func() error {
		d, err := admin.DescribeProducers(ctx, kadm.TopicsSet{topic: nil})
		if err != nil {
			return err
		}
		described = d
		return nil
	})
	for _, p := range led {
		dp, ok := described[topic].Partitions[p]
		if !ok || dp.Err != nil {
			t.Errorf("DescribeProducers partition %d: %v (answered %v)", p, dp.Err, ok)
			continue
		}
		if dp.Leader == victim {
			t.Errorf("partition %d described by the killed broker %d", p, victim)
		}
		found, witnessFound := false, false
		for _, ap := range dp.ActiveProducers {
			if ap.ProducerID == wid {
				witnessFound = true
				if ap.ProducerEpoch != wepoch || ap.LastSequence != witnessPerPartition-1 {
					t.Errorf("partition %d (new leader %d): witness %d epoch %d last sequence %d, want epoch %d and %d",
						p, dp.Leader, wid, ap.ProducerEpoch, ap.LastSequence, wepoch, witnessPerPartition-1)
				}
			}
			if ap.ProducerID != pid {
				continue
			}
			found = true
			if ap.ProducerEpoch != pepoch || ap.LastSequence != wrote[p]-1 {
				t.Errorf("partition %d (new leader %d): producer %d epoch %d last sequence %d, want epoch %d and %d (%d records written)",
					p, dp.Leader, pid, ap.ProducerEpoch, ap.LastSequence, pepoch, wrote[p]-1, wrote[p])
			}
		}
		if !witnessFound {
			t.Errorf("partition %d (new leader %d) does not know the witness producer %d, which wrote there before the kill: %+v", p, dp.Leader, wid, dp.ActiveProducers)
		}
		if !found && wrote[p] > 0 {
			t.Errorf("partition %d (new leader %d) does not know producer %d, which wrote %d records there: %+v", p, dp.Leader, pid, wrote[p], dp.ActiveProducers)
		}
	}
}

// checkMetadataMatchesState compares every running broker's Metadata with
// the state znodes: leader, leader epoch and ISR.
func checkMetadataMatchesState(c *harness.Cluster, conn *zk.Conn, topic string, partitions int32) error {
	states, err := readStates(conn, topic, partitions)
	if err != nil {
		return err
	}
	for _, b := range c.Brokers {
		if !b.Running() {
			continue
		}
		v, err := metadataView(b.Addr, topic)
		if err != nil {
			return fmt.Errorf("broker %d: %w", b.ID, err)
		}
		for p, s := range states {
			if v[p].Leader != s.Leader || v[p].LeaderEpoch != s.LeaderEpoch || !sameSet(v[p].ISR, s.ISR) {
				return fmt.Errorf("broker %d Metadata partition %d: %v; state znode leader %d epoch %d isr %v",
					b.ID, p, v[p], s.Leader, s.LeaderEpoch, s.ISR)
			}
		}
	}
	return nil
}

// produceN produces n records valued prefix-i round-robin over the
// partitions and fails on any error.
func produceN(t *testing.T, cl *kgo.Client, prefix string, n int) []*kgo.Record {
	t.Helper()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, i)})
	}
	if err := cl.ProduceSync(testCtx(t, 60*time.Second), recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
	return recs
}

// consumeAll reads topic from the start until want records arrived, then a
// moment longer to see duplicates.
func consumeAll(t *testing.T, seeds []string, topic string, want int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	cl := newClient(t, seeds, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(500*time.Millisecond))
	ctx := testCtx(t, timeout)
	var out []*kgo.Record
	var settle time.Time
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			if len(out) >= want {
				return out
			}
			t.Fatalf("consume %s: %d of %d records within %v", topic, len(out), want, timeout)
		}
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("fetch %s/%d: %v", tp, p, err)
			}
		})
		out = append(out, fs.Records()...)
		if len(out) >= want {
			if settle.IsZero() {
				settle = time.Now().Add(2 * time.Second)
			} else if time.Now().After(settle) {
				return out
			}
		}
	}
}
