package cluster

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Issue 4 acceptance, KIP-101 end to end with process kills: a replica that
// led and holds records the next leader never had must drop them by
// leader-epoch truncation when it rejoins.
//
// The recipe is chosen so that HW truncation would give a different,
// wrong, result (KIP-101's scenarios 1 and 2, where truncating to the HW
// loses or splits acknowledged records): the old leader L's checkpointed HW
// lies above the point where its log and the new leader's diverge.
//  1. rf 3 [L, B, C], min.insync.replicas 2, unclean election on.
//     "committed" records with acks=all reach all three.
//  2. SIGKILL C; the ISR shrinks to {L, B}. "suffix" records, acks=1,
//     reach L and B only; the HW passes them (ISR 2 >= min ISR) and L
//     checkpoints that HW.
//  3. SIGKILL L and B. Restart C alone: it is elected uncleanly and
//     writes "newleader" records (acks=1) at the offsets the suffix had.
//  4. Restart L and B. By HW they would keep the suffix (their HW is
//     above it) and diverge from C; by leader epoch (C answers the end
//     of L's epoch with C's LEO at its election) they cut it.
//
// Then acks=all works again ("after" records); every acks=all record and
// every newleader record is read exactly once at its offset, no suffix
// record is readable, and all three logs are byte-identical.
//
// Subtest SuffixAboveHW is the simpler recipe, the literal KIP-101
// setting: the followers are SIGSTOPped (briefly, so neither the ISR nor a
// ZooKeeper session changes), L takes acks=1 records nobody else has and
// is SIGKILLed, a follower is elected cleanly and takes acks=all records,
// and L must cut its suffix (here above its HW) on rejoining.
func TestChaosKIP101Truncation(t *testing.T) {
	t.Run("SuffixBelowHW", kip101SuffixBelowHW)
	t.Run("SuffixAboveHW", kip101SuffixAboveHW)
}

func kip101SuffixBelowHW(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	rest := otherThan(c, ctrl)
	// C is not the controller, so its death leaves the controller to
	// shrink the ISR at once.
	l, b, cc := rest[0], ctrl, rest[1]
	const topic = "chaos-kip101"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {l, b, cc}}, map[string]*string{
		"min.insync.replicas":            strp("2"),
		"unclean.leader.election.enable": strp("true"),
	})
	waitFullISR(t, conn, topic, 1, 3)
	t.Logf("roles: old leader L=%d, its follower B=%d (controller), later unclean leader C=%d", l, b, cc)

	allAcks := newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked := produceChaosSync(t, allAcks, 0, "committed", 200)
	waitFullISR(t, conn, topic, 1, 3)
	diverge := int64(0) // C's LEO: the first offset only L and B will have
	for _, a := range acked {
		diverge = max(diverge, a.Offset+1)
	}

	// 2. C dies; L and B alone take acks=1 records.
	c.Broker(cc).Kill()
	waitUntil(t, sessionTimeout+20*time.Second, "ISR shrinks to {L, B}", func() error {
		s, err := readState(conn, topic, 0)
		if err != nil {
			return err
		}
		if s.Leader != l || !sameSet(s.ISR, []int32{l, b}) {
			return fmt.Errorf("state %+v", s)
		}
		return nil
	})
	oneAckLB := newClient(t, []string{c.Broker(l).Addr, c.Broker(b).Addr}, kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	suffix := produceChaosSync(t, oneAckLB, 0, "suffix", 100)
	suffixEnd := diverge
	for _, a := range suffix {
		if a.Offset < diverge {
			t.Fatalf("suffix record acknowledged at %d, below the committed records' end %d", a.Offset, diverge)
		}
		suffixEnd = max(suffixEnd, a.Offset+1)
	}
	waitUntil(t, 20*time.Second, "L checkpoints a HW covering the suffix", func() error {
		hw, err := checkpointHW(c.Broker(l).LogDir, topic, 0)
		if err != nil {
			return err
		}
		if hw < suffixEnd {
			return fmt.Errorf("L's replication-offset-checkpoint says %d, suffix ends at %d", hw, suffixEnd)
		}
		return nil
	})
	beforeKill, err := readState(conn, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	lHW, _ := checkpointHW(c.Broker(l).LogDir, topic, 0)
	t.Logf("before the kills: %+v; committed end %d, suffix %d..%d, L's checkpointed HW %d",
		beforeKill, diverge, diverge, suffixEnd-1, lHW)

	// 3. L and B die; C comes back alone and is elected uncleanly.
	c.Broker(l).Kill()
	c.Broker(b).Kill()
	waitUntil(t, sessionTimeout+20*time.Second, "L's and B's registrations gone", func() error {
		for _, id := range []int32{l, b} {
			if ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", id)); err != nil || ok {
				return fmt.Errorf("/brokers/ids/%d exists %v (%v)", id, ok, err)
			}
		}
		return nil
	})
	restartChecked(t, c, conn, cc)
	var elected partitionState
	waitUntil(t, sessionTimeout+40*time.Second, "C elected uncleanly", func() error {
		var err error
		if elected, err = readState(conn, topic, 0); err != nil {
			return err
		}
		if elected.Leader != cc || elected.LeaderEpoch <= beforeKill.LeaderEpoch {
			return fmt.Errorf("state %+v (epoch before %d)", elected, beforeKill.LeaderEpoch)
		}
		return nil
	})
	t.Logf("C elected: %+v", elected)
	oneAckC := newClient(t, []string{c.Broker(cc).Addr}, kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	newLeader := produceChaosSync(t, oneAckC, 0, "newleader", 50)
	first := int64(-1)
	for _, a := range newLeader {
		if first < 0 || a.Offset < first {
			first = a.Offset
		}
	}
	if first != diverge {
		t.Errorf("C's first new record is at offset %d, want %d (C's LEO when it was killed)", first, diverge)
	}

	// 4. L and B return as followers of C.
	restartChecked(t, c, conn, l)
	restartChecked(t, c, conn, b)
	waitFullISR(t, conn, topic, 1, 3)
	for k, v := range produceChaosSync(t, allAcks, 0, "after", 200) {
		acked[k] = v
	}
	waitFullISR(t, conn, topic, 1, 3)

	verifyKIP101(t, c, conn, topic, acked, newLeader, suffix, []int32{l, b}, cc)
}

// verifyKIP101 checks the end state: acks=all records and the new
// leader's acks=1 records read exactly once at their offsets, no suffix
// record readable, and every follower's whole log equal to the new
// leader cc's once all brokers are stopped.
func verifyKIP101(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string,
	acked, newLeader, suffix map[string]chaosAck, followers []int32, cc int32) {
	t.Helper()
	hw := highWatermarks(t, c, topic)
	t.Logf("final HW %d, state %+v", hw[0], mustStates(t, conn, topic, 1)[0])
	read := readPartitionsToHW(t, c, topic, hw)
	checkAckedExactlyOnce(t, "acks=all records", acked, read)
	if newLeader != nil {
		checkAckedExactlyOnce(t, "acks=1 records on the new leader", newLeader, read)
	}
	var readable []string
	for v := range suffix {
		if r := read[v]; len(r) > 0 {
			readable = append(readable, fmt.Sprintf("%s at %v", v, r))
		}
	}
	if len(readable) > 0 {
		slices.Sort(readable)
		t.Errorf("%d of the truncated suffix records are readable, e.g. %v", len(readable), readable[:min(5, len(readable))])
	}

	stopAll(t, c)
	compareReplicaLogs(t, c, conn, topic, hw)
	// Past the HW too: with no producer and a full ISR the whole logs
	// must agree, so no replica kept a stale tail.
	whole := map[int32][]byte{}
	for _, id := range append(slices.Clone(followers), cc) {
		got, err := logBytesBelow(c.Broker(id).LogDir, topic, 0, hw[0])
		if err != nil {
			t.Errorf("replica %d: %v", id, err)
			continue
		}
		all, err := allSegmentBytes(c.Broker(id).LogDir, topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(got) {
			t.Errorf("replica %d: %d bytes of log beyond the HW %d", id, len(all)-len(got), hw[0])
		}
		whole[id] = all
	}
	for _, id := range followers {
		if whole[id] != nil && whole[cc] != nil && !bytes.Equal(whole[id], whole[cc]) {
			t.Errorf("replica %d's whole log (%d bytes) differs from the new leader %d's (%d bytes)", id, len(whole[id]), cc, len(whole[cc]))
		}
	}
	for _, id := range followers {
		t.Logf("broker %d %s", id, truncationLines(c.Broker(id).LogPath, topic, 8))
	}
}

func kip101SuffixAboveHW(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	rest := otherThan(c, ctrl)
	// L is not the controller, so its death is handled by a controller
	// that was only paused for a moment.
	l, b, cc := rest[0], rest[1], ctrl
	const topic = "chaos-kip101-above"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {l, b, cc}}, minISR2)
	waitFullISR(t, conn, topic, 1, 3)
	t.Logf("roles: old leader L=%d, followers B=%d and C=%d (controller)", l, b, cc)

	allAcks := newClient(t, c.Addrs(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked := produceChaosSync(t, allAcks, 0, "committed", 200)
	waitFullISR(t, conn, topic, 1, 3)
	before, err := readState(conn, topic, 0)
	if err != nil {
		t.Fatal(err)
	}

	// Followers frozen well inside replica.lag.time.max.ms and the
	// session timeout; L alone takes acks=1 records, then dies.
	oneAckL := newClient(t, []string{c.Broker(l).Addr}, kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	// The client must know the leader and hold its produce connection
	// before the pause: a metadata request that lands on a frozen broker
	// would stall the produce past the session timeout.
	produceChaosSync(t, oneAckL, 0, "warmup", 1)
	if leader, _, err := oneAckL.PartitionLeader(topic, 0); err != nil || leader != l {
		t.Fatalf("the acks=1 client sees leader %d (%v), want %d", leader, err, l)
	}
	waitFullISR(t, conn, topic, 1, 3)
	for _, id := range []int32{b, cc} {
		if err := c.Broker(id).Pause(); err != nil {
			t.Fatal(err)
		}
	}
	paused := time.Now()
	// A fetch the followers sent before they froze is still parked on L
	// and would carry the suffix into their socket buffers, to be applied
	// on SIGCONT. Let it expire (replica.fetch.wait.max.ms, 500 ms) first.
	time.Sleep(time.Second)
	suffix := produceChaosSync(t, oneAckL, 0, "suffix", 100)
	c.Broker(l).Kill()
	for _, id := range []int32{b, cc} {
		if err := c.Broker(id).Resume(); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(paused); d > sessionTimeout-time.Second {
		t.Fatalf("setup: the followers stayed paused %v, too close to the session timeout %v for a clean election", d, sessionTimeout)
	}
	t.Logf("followers paused for %v", time.Since(paused).Round(time.Millisecond))
	lHW, _ := checkpointHW(c.Broker(l).LogDir, topic, 0)
	suffixEnd := int64(0)
	for _, a := range suffix {
		suffixEnd = max(suffixEnd, a.Offset+1)
	}
	t.Logf("L's suffix ends at %d; L's checkpointed HW %d", suffixEnd, lHW)

	elected := waitLeaderChange(t, conn, topic, 0, l, sessionTimeout+30*time.Second)
	if elected.LeaderEpoch <= before.LeaderEpoch {
		t.Errorf("new leader %d has epoch %d, not above %d", elected.Leader, elected.LeaderEpoch, before.LeaderEpoch)
	}
	t.Logf("elected: %+v", elected)
	for k, v := range produceChaosSync(t, allAcks, 0, "newleader", 150) {
		acked[k] = v
	}
	waitUntil(t, 20*time.Second, fmt.Sprintf("/brokers/ids/%d removed", l), func() error {
		if ok, _, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", l)); err != nil || ok {
			return fmt.Errorf("/brokers/ids/%d exists %v (%v)", l, ok, err)
		}
		return nil
	})
	restartChecked(t, c, conn, l)
	waitFullISR(t, conn, topic, 1, 3)
	for k, v := range produceChaosSync(t, allAcks, 0, "after", 100) {
		acked[k] = v
	}
	var others []int32
	if elected.Leader == cc {
		others = []int32{b}
	} else {
		others = []int32{cc}
	}
	verifyKIP101(t, c, conn, topic, acked, nil, suffix, append([]int32{l}, others...), elected.Leader)
}
