package compat

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoCodecs round-trips records through each compression codec and
// checks per-key order, which the broker must keep within a partition.
func TestKgoCodecs(t *testing.T) {
	b := harness.StartBroker(t)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for _, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(name, func(t *testing.T) {
			topic := "kgo-" + name
			createTopic(t, b.Addr, topic, 3, nil)
			const n, keys = 5000, 12
			cl := newClient(t, b.Addr, kgo.ProducerBatchCompression(codecs[name]), kgo.ProducerLinger(5*time.Millisecond))
			recs := make([]*kgo.Record, n)
			for i := range recs {
				recs[i] = &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i % keys)), Value: seqValue(i)}
			}
			produceSync(t, cl, recs...)
			got := consumeN(t, b.Addr, topic, n, time.Minute)
			checkKeyedOrder(t, got, n, keys)
		})
	}
}

// checkKeyedOrder checks that every value 0..n-1 was read once and that
// each key's values, and each partition's offsets, increase.
func checkKeyedOrder(t *testing.T, recs []*kgo.Record, n, keys int) {
	t.Helper()
	seen := make([]bool, n)
	lastByKey := map[string]int{}
	lastOffset := map[int32]int64{}
	for _, r := range recs {
		v, err := strconv.Atoi(string(r.Value))
		if err != nil || v < 0 || v >= n {
			t.Fatalf("bad value %q at %s[%d]@%d", r.Value, r.Topic, r.Partition, r.Offset)
		}
		if seen[v] {
			t.Fatalf("value %d read twice", v)
		}
		seen[v] = true
		if want := strconv.Itoa(v % keys); string(r.Key) != want {
			t.Fatalf("value %d has key %q, want %q", v, r.Key, want)
		}
		if last, ok := lastByKey[string(r.Key)]; ok && v <= last {
			t.Fatalf("key %s: value %d after %d", r.Key, v, last)
		}
		lastByKey[string(r.Key)] = v
		if last, ok := lastOffset[r.Partition]; ok && r.Offset <= last {
			t.Fatalf("partition %d: offset %d after %d", r.Partition, r.Offset, last)
		}
		lastOffset[r.Partition] = r.Offset
	}
}

// groupMember is a kgo group consumer that records its current assignment
// as the client reports it through the rebalance callbacks.
type groupMember struct {
	name   string
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	owned map[int32]bool
}

func startMember(t *testing.T, addr, group, topic, name string) *groupMember {
	t.Helper()
	m := &groupMember{name: name, owned: map[int32]bool{}, done: make(chan struct{})}
	update := func(ps map[string][]int32, own bool) {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, p := range ps[topic] {
			if own {
				m.owned[p] = true
			} else {
				delete(m.owned, p)
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ClientID(name),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { update(ps, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { update(ps, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { update(ps, false) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	t.Cleanup(m.leave)
	return m
}

// leave stops polling and closes the client, which leaves the group.
func (m *groupMember) leave() {
	m.cancel()
	<-m.done
	m.cl.Close()
	m.mu.Lock()
	m.owned = map[int32]bool{}
	m.mu.Unlock()
}

func (m *groupMember) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []int32
	for p := range m.owned {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// waitBalanced waits until the members together own every partition
// exactly once, and each owns partitions/len(members).
func waitBalanced(t *testing.T, members []*groupMember, partitions int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var state string
	for time.Now().Before(deadline) {
		owner := map[int32]string{}
		ok := true
		state = ""
		for _, m := range members {
			ps := m.partitions()
			state += fmt.Sprintf("%s=%v ", m.name, ps)
			if len(ps) != partitions/len(members) {
				ok = false
			}
			for _, p := range ps {
				if _, dup := owner[p]; dup {
					ok = false
				}
				owner[p] = m.name
			}
		}
		if ok && len(owner) == partitions {
			t.Logf("balanced: %s", state)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("group not balanced over %d partitions within 60s: %s", partitions, state)
}

func TestKgoGroupBalance(t *testing.T) {
	b := harness.StartBroker(t)
	const topic, group, partitions = "group-topic", "balance-g", 6
	createTopic(t, b.Addr, topic, partitions, nil)
	m1 := startMember(t, b.Addr, group, topic, "m1")
	m2 := startMember(t, b.Addr, group, topic, "m2")
	m3 := startMember(t, b.Addr, group, topic, "m3")
	waitBalanced(t, []*groupMember{m1, m2, m3}, partitions)

	m3.leave()
	waitBalanced(t, []*groupMember{m1, m2}, partitions)

	m4 := startMember(t, b.Addr, group, topic, "m4")
	waitBalanced(t, []*groupMember{m1, m2, m4}, partitions)
}

// TestKgoCommittedOffsetsSurviveRestart commits offsets, restarts the
// broker (controlled shutdown or SIGKILL) and checks the group resumes
// exactly where it committed.
func TestKgoCommittedOffsetsSurviveRestart(t *testing.T) {
	for _, mode := range []string{"SIGTERM", "SIGKILL"} {
		t.Run(mode, func(t *testing.T) {
			b := harness.StartBroker(t)
			const topic, group, partitions, perPartition = "commit-topic", "commit-g", 6, 50
			createTopic(t, b.Addr, topic, partitions, nil)
			produceRound := func(round int) {
				cl := newClient(t, b.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
				var recs []*kgo.Record
				for p := int32(0); p < partitions; p++ {
					for i := 0; i < perPartition; i++ {
						recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("r%d-p%d-%d", round, p, i))})
					}
				}
				produceSync(t, cl, recs...)
				cl.Close()
			}
			consumeRound := func(round int) {
				cl := newClient(t, b.Addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
				ctx := testCtx(t, time.Minute)
				for got := 0; got < partitions*perPartition; {
					fs := cl.PollFetches(ctx)
					if ctx.Err() != nil {
						t.Fatalf("round %d: read %d of %d records", round, got, partitions*perPartition)
					}
					fs.EachRecord(func(r *kgo.Record) {
						// A record of an earlier round means the committed
						// offset was lost or ignored.
						if want := fmt.Sprintf("r%d-", round); !strings.HasPrefix(string(r.Value), want) {
							t.Fatalf("round %d read %q at %d@%d", round, r.Value, r.Partition, r.Offset)
						}
						got++
					})
				}
				if err := cl.CommitUncommittedOffsets(ctx); err != nil {
					t.Fatalf("commit: %v", err)
				}
				cl.Close()
			}
			produceRound(1)
			consumeRound(1)

			if mode == "SIGTERM" {
				if err := b.Term(); err != nil {
					t.Errorf("SIGTERM shutdown: %v", err)
				}
			} else {
				b.Kill()
			}
			b.Restart(t)

			ctx := testCtx(t, 30*time.Second)
			offs, err := newAdmin(t, b.Addr).FetchOffsets(ctx, group)
			if err != nil {
				t.Fatalf("fetch offsets after restart: %v", err)
			}
			for p := int32(0); p < partitions; p++ {
				o, ok := offs.Lookup(topic, p)
				if !ok || o.Err != nil || o.At != perPartition {
					t.Errorf("after %s restart, committed offset of partition %d = %+v (found %v), want %d", mode, p, o, ok, perPartition)
				}
			}
			produceRound(2)
			consumeRound(2)
		})
	}
}

func TestKadmTopicsAndConfigs(t *testing.T) {
	b := harness.StartBroker(t)
	adm := newAdmin(t, b.Addr)
	ctx := testCtx(t, time.Minute)
	retention := "86400000"
	created, err := adm.CreateTopics(ctx, 4, 1, map[string]*string{"retention.ms": &retention}, "kadm-a", "kadm-b")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range created.Sorted() {
		if c.Err != nil {
			t.Fatalf("create %s: %v %s", c.Topic, c.Err, c.ErrMessage)
		}
	}
	// Creating it again must fail with TOPIC_ALREADY_EXISTS.
	again, err := adm.CreateTopics(ctx, 4, 1, nil, "kadm-a")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := again.On("kadm-a", nil); r.Err == nil {
		t.Errorf("second create of kadm-a succeeded, want TOPIC_ALREADY_EXISTS")
	}

	listed, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kadm-a", "kadm-b"} {
		d, ok := listed[name]
		if !ok || d.Err != nil || len(d.Partitions) != 4 {
			t.Errorf("ListTopics %s: present %v, %+v", name, ok, d)
		}
	}

	cfgs, err := adm.DescribeTopicConfigs(ctx, "kadm-a")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfgs.On("kadm-a", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe configs kadm-a: %v %v", err, rc.Err)
	}
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" {
			found = c.Value != nil && *c.Value == retention
			if !found {
				t.Errorf("retention.ms = %v, want %s", c.MaybeValue(), retention)
			}
		}
	}
	if !found {
		t.Errorf("describe configs of kadm-a lacks retention.ms")
	}

	deleted, err := adm.DeleteTopics(ctx, "kadm-a", "kadm-b")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deleted.Sorted() {
		if d.Err != nil {
			t.Errorf("delete %s: %v", d.Topic, d.Err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		listed, err := adm.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !listed.Has("kadm-a") && !listed.Has("kadm-b") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topics still listed 30s after delete: %v", listed.Names())
		}
		time.Sleep(300 * time.Millisecond)
	}
}
