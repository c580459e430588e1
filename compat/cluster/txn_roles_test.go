package cluster

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Which broker plays which part in a transaction, found the way a client
// or an operator would: Metadata and FindCoordinator.

const (
	transactionStateTopic = "__transaction_state"
	offsetsTopic          = "__consumer_offsets"
	// internalTopicPartitions is transaction.state.log.num.partitions and
	// offsets.topic.num.partitions, Kafka's default, set explicitly by the
	// tests that compute a coordinator's partition.
	internalTopicPartitions = 50
)

// javaStringHash is Java's String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units, in wrapping int32 arithmetic.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// coordinatorPartition is the internal-topic partition that owns key:
// Utils.abs(key.hashCode) % partitions, as Kafka's
// TransactionStateManager.partitionFor and GroupMetadataManager.partitionFor
// compute it. Utils.abs (Utils.java) maps Integer.MIN_VALUE to 0 rather
// than leaving it negative.
func coordinatorPartition(key string, partitions int32) int32 {
	h := javaStringHash(key)
	if h == math.MinInt32 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return h % partitions
}

// Java's own String.hashCode and Utils.abs(hash) % 50 for these keys
// (computed with a JDK), among them the one string whose hash is
// Integer.MIN_VALUE, where Math.abs would stay negative, and a negative
// hash.
func TestCoordinatorPartition(t *testing.T) {
	for _, c := range []struct {
		key  string
		hash int32
		p    int32
	}{
		{"", 0, 0},
		{"hello", 99162322, 22},
		{"polygenelubricants", math.MinInt32, 0},
		{"é", 233, 33},
		{"zzzzzzzz", -1910022912, 12},
		{"txn-chaos-copier", 1162000450, 0},
		{"txn-chaos-group", -1898395889, 39},
	} {
		if got := javaStringHash(c.key); got != c.hash {
			t.Errorf("javaStringHash(%q) = %d, want %d", c.key, got, c.hash)
		}
		if got := coordinatorPartition(c.key, 50); got != c.p {
			t.Errorf("coordinatorPartition(%q, 50) = %d, want %d", c.key, got, c.p)
		}
	}
}

// agreedMetadata asks every address for topics and returns, per topic and
// partition, the view they all share; an error names the first
// disagreement, a partition without a leader, or a missing topic.
func agreedMetadata(addrs []string, topics ...string) (map[string]map[int32]partitionView, error) {
	var agreed map[string]map[int32]partitionView
	for _, addr := range addrs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := harness.MetadataFrom(ctx, addr, topics...)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("Metadata from %s: %w", addr, err)
		}
		got := map[string]map[int32]partitionView{}
		for _, mt := range resp.Topics {
			if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
				return nil, fmt.Errorf("%s via %s: %w", *mt.Topic, addr, err)
			}
			pv := map[int32]partitionView{}
			for _, p := range mt.Partitions {
				if p.Leader < 0 {
					return nil, fmt.Errorf("%s/%d has no leader via %s", *mt.Topic, p.Partition, addr)
				}
				pv[p.Partition] = partitionView{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR}
			}
			got[*mt.Topic] = pv
		}
		for _, tp := range topics {
			if got[tp] == nil {
				return nil, fmt.Errorf("%s missing from Metadata via %s", tp, addr)
			}
		}
		if agreed == nil {
			agreed = got
			continue
		}
		for tp, pv := range got {
			for p, v := range pv {
				a := agreed[tp][p]
				if a.Leader != v.Leader || a.LeaderEpoch != v.LeaderEpoch || !sameSet(a.ISR, v.ISR) {
					return nil, fmt.Errorf("%s/%d: %s via %s, %s via %s", tp, p, v, addr, a, addrs[0])
				}
			}
		}
	}
	return agreed, nil
}

// waitFullISRAgreed waits until every running broker shows every
// partition of each topic with a leader and all rf replicas in the ISR:
// the cluster has healed from the last fault.
func waitFullISRAgreed(t *testing.T, c *harness.Cluster, rf int, timeout time.Duration, topics ...string) {
	t.Helper()
	waitUntil(t, timeout, fmt.Sprintf("full ISRs of %v on every broker", topics), func() error {
		md, err := agreedMetadata(c.Addrs(), topics...)
		if err != nil {
			return err
		}
		for tp, pv := range md {
			for p, v := range pv {
				if len(v.ISR) != rf {
					return fmt.Errorf("%s/%d: %s", tp, p, v)
				}
			}
		}
		return nil
	})
}

// findCoordinator asks the broker at addr itself (no client routing) for
// the coordinator of key; typ is 0 for a group, 1 for a transactional id.
func findCoordinator(addr, key string, typ int8) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = typ
	// v0-3 carry one key, v4+ a list; the broker reads the field of the
	// version the client negotiated.
	req.CoordinatorKey = key
	req.CoordinatorKeys = []string{key}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return -1, err
	}
	node, code := resp.NodeID, resp.ErrorCode
	if len(resp.Coordinators) > 0 {
		node, code = resp.Coordinators[0].NodeID, resp.Coordinators[0].ErrorCode
	}
	if err := kerr.ErrorForCode(code); err != nil {
		return -1, err
	}
	return node, nil
}

// coordinatorOf waits until every running broker names the same
// coordinator for key, and that coordinator is the leader of key's
// partition of topic (Kafka's FindCoordinator answers with that leader).
func coordinatorOf(t *testing.T, c *harness.Cluster, key string, typ int8, topic string) int32 {
	t.Helper()
	p := coordinatorPartition(key, internalTopicPartitions)
	var coord int32
	waitUntil(t, 30*time.Second, fmt.Sprintf("coordinator of %q (%s partition %d) agreed", key, topic, p), func() error {
		md, err := agreedMetadata(c.Addrs(), topic)
		if err != nil {
			return err
		}
		leader := md[topic][p].Leader
		for _, addr := range c.Addrs() {
			node, err := findCoordinator(addr, key, typ)
			if err != nil {
				return fmt.Errorf("FindCoordinator %q via %s: %w", key, addr, err)
			}
			if node != leader {
				return fmt.Errorf("FindCoordinator %q via %s names %d, the leader of %s/%d is %d", key, addr, node, topic, p, leader)
			}
		}
		coord = leader
		return nil
	})
	return coord
}

// txnRoles is who did what just before a fault.
type txnRoles struct {
	txnCoordinator, groupCoordinator, controller int32
	outputLeaders                                map[int32]int32 // output partition -> leader
}

func (r txnRoles) describe(id int32) string {
	var parts []string
	if id == r.txnCoordinator {
		parts = append(parts, "transaction coordinator")
	}
	if id == r.groupCoordinator {
		parts = append(parts, "group coordinator")
	}
	if id == r.controller {
		parts = append(parts, "controller")
	}
	var led []int32
	for p, l := range r.outputLeaders {
		if l == id {
			led = append(led, p)
		}
	}
	slices.Sort(led)
	if len(led) > 0 {
		parts = append(parts, fmt.Sprintf("leader of output partitions %v", led))
	}
	if len(parts) == 0 {
		return "no role"
	}
	return strings.Join(parts, ", ")
}

// outputLeaderVictim picks a leader of an output partition, preferably
// one that coordinates nothing, so the fault is the leader's alone.
func (r txnRoles) outputLeaderVictim() int32 {
	leaders := map[int32]bool{}
	for _, l := range r.outputLeaders {
		leaders[l] = true
	}
	ids := make([]int32, 0, len(leaders))
	for id := range leaders {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, avoid := range [][]int32{{r.txnCoordinator, r.groupCoordinator}, {r.txnCoordinator}, {r.groupCoordinator}, nil} {
		for _, id := range ids {
			if !slices.Contains(avoid, id) {
				return id
			}
		}
	}
	return -1
}
