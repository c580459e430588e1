package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sessionTimeout is the harness's zookeeper.session.timeout.ms: how long a
// SIGKILLed broker stays registered.
const sessionTimeout = 6 * time.Second

// testCtx is a context bounded by d and cancelled when the test ends.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, seeds []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// waitUntil polls cond every 200 ms until it returns nil; after timeout
// it fails the test with cond's last error.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if last = cond(); last == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// partitionState is /brokers/topics/<t>/partitions/<p>/state, with the
// znode's version (the partition epoch).
type partitionState struct {
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
	ControllerEpoch int32   `json:"controller_epoch"`
	Version         int     `json:"version"`
	ZkVersion       int32   `json:"-"`
}

func statePath(topic string, p int32) string {
	return fmt.Sprintf("/brokers/topics/%s/partitions/%d/state", topic, p)
}

func readState(conn *zk.Conn, topic string, p int32) (partitionState, error) {
	var s partitionState
	data, stat, err := conn.Get(statePath(topic, p))
	if err != nil {
		return s, fmt.Errorf("get %s: %w", statePath(topic, p), err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s %q: %w", statePath(topic, p), data, err)
	}
	s.ZkVersion = stat.Version
	return s, nil
}

// readStates reads the state of partitions 0..n-1.
func readStates(conn *zk.Conn, topic string, n int32) (map[int32]partitionState, error) {
	out := map[int32]partitionState{}
	for p := range n {
		s, err := readState(conn, topic, p)
		if err != nil {
			return nil, err
		}
		out[p] = s
	}
	return out, nil
}

func mustStates(t *testing.T, conn *zk.Conn, topic string, n int32) map[int32]partitionState {
	t.Helper()
	s, err := readStates(conn, topic, n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// controllerID is the brokerid in /controller, -1 when there is none.
func controllerID(conn *zk.Conn) (int32, error) {
	data, _, err := conn.Get("/controller")
	if err == zk.ErrNoNode {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	var c struct {
		BrokerID int32 `json:"brokerid"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return -1, fmt.Errorf("/controller %q: %w", data, err)
	}
	return c.BrokerID, nil
}

func controllerEpoch(conn *zk.Conn) (int32, error) {
	data, _, err := conn.Get("/controller_epoch")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(string(data), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("/controller_epoch %q: %w", data, err)
	}
	return int32(v), nil
}

// anyBroker accepts whichever broker waitController finds.
func anyBroker(int32) bool { return true }

func waitController(t *testing.T, conn *zk.Conn, timeout time.Duration, ok func(int32) bool) int32 {
	t.Helper()
	var id int32
	waitUntil(t, timeout, "controller elected", func() error {
		var err error
		if id, err = controllerID(conn); err != nil {
			return err
		}
		if id < 0 || !ok(id) {
			return fmt.Errorf("/controller names %d", id)
		}
		return nil
	})
	return id
}

// topicAssignment is the partitions map of /brokers/topics/<t>.
func topicAssignment(conn *zk.Conn, topic string) (map[int32][]int32, error) {
	data, _, err := conn.Get("/brokers/topics/" + topic)
	if err != nil {
		return nil, err
	}
	var z struct {
		Partitions map[string][]int32 `json:"partitions"`
	}
	if err := json.Unmarshal(data, &z); err != nil {
		return nil, err
	}
	out := map[int32][]int32{}
	for k, v := range z.Partitions {
		p, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("partition key %q: %w", k, err)
		}
		out[int32(p)] = v
	}
	return out, nil
}

// partitionView is one partition as Metadata or kafka-topics shows it.
type partitionView struct {
	Leader      int32
	LeaderEpoch int32 // -1 where the source does not carry it
	Replicas    []int32
	ISR         []int32
}

func (v partitionView) String() string {
	return fmt.Sprintf("leader %d epoch %d replicas %v isr %v", v.Leader, v.LeaderEpoch, v.Replicas, v.ISR)
}

// metadataView asks exactly the broker at addr for topic's partitions.
func metadataView(addr, topic string) (map[int32]partitionView, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := harness.MetadataFrom(ctx, addr, topic)
	if err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("%d topics in Metadata", len(resp.Topics))
	}
	mt := resp.Topics[0]
	if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
		return nil, fmt.Errorf("topic %s: %w", topic, err)
	}
	out := map[int32]partitionView{}
	for _, p := range mt.Partitions {
		out[p.Partition] = partitionView{
			Leader:      p.Leader,
			LeaderEpoch: p.LeaderEpoch,
			Replicas:    p.Replicas,
			ISR:         p.ISR,
		}
	}
	return out, nil
}

var describeLine = regexp.MustCompile(`Partition:\s*(\d+)\s+Leader:\s*(-?\d+|none)\s+Replicas:\s*([\d,]*)\s+Isr:\s*([\d,]*)`)

// describeTool runs `kafka-topics --describe` against addr.
func describeTool(t *testing.T, addr, topic string) map[int32]partitionView {
	t.Helper()
	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-topics",
		"--bootstrap-server", addr, "--describe", "--topic", topic)
	if err != nil {
		t.Fatalf("kafka-topics --describe via %s: %v\n%s\n%s", addr, err, out, stderr)
	}
	views := map[int32]partitionView{}
	for _, m := range describeLine.FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[1])
		leader := int32(-1)
		if m[2] != "none" {
			l, _ := strconv.Atoi(m[2])
			leader = int32(l)
		}
		views[int32(p)] = partitionView{Leader: leader, LeaderEpoch: -1, Replicas: ids(m[3]), ISR: ids(m[4])}
	}
	if len(views) == 0 {
		t.Fatalf("kafka-topics --describe via %s: no partition lines:\n%s\n%s", addr, out, stderr)
	}
	return views
}

func ids(csv string) []int32 {
	var out []int32
	for _, f := range strings.Split(csv, ",") {
		if f == "" {
			continue
		}
		v, _ := strconv.Atoi(f)
		out = append(out, int32(v))
	}
	return out
}

// sameSet compares broker id lists ignoring order (Kafka keeps the ISR in
// no particular order).
func sameSet(a, b []int32) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// createTopic creates a topic through kadm (which sends CreateTopics to
// the controller Metadata names) and waits until every running broker's
// Metadata shows a leader for each partition.
func createTopic(t *testing.T, c *harness.Cluster, topic string, partitions int32, rf int16, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(newClient(t, c.Addrs()))
	resp, err := adm.CreateTopic(testCtx(t, 30*time.Second), partitions, rf, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v (%s)", topic, err, resp.ErrMessage)
	}
	waitLeaders(t, c, topic, partitions)
}

// createTopicAssigned creates a topic with an explicit replica assignment.
func createTopicAssigned(t *testing.T, c *harness.Cluster, topic string, assignment map[int32][]int32, configs map[string]*string) {
	t.Helper()
	cl := newClient(t, c.Addrs())
	// kadm's CreateTopic takes no assignment, so build the request; kgo
	// routes CreateTopics to the controller.
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	for p := range int32(len(assignment)) {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = p, assignment[p]
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	for k, v := range configs {
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name, rc.Value = k, v
		rt.Configs = append(rt.Configs, rc)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testCtx(t, 30*time.Second), cl)
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	for _, rt := range resp.Topics {
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			t.Fatalf("create topic %s: %v (%v)", topic, err, rt.ErrorMessage)
		}
	}
	waitLeaders(t, c, topic, int32(len(assignment)))
}

// waitLeaders waits until every running broker's Metadata shows a live
// leader for every partition of topic.
func waitLeaders(t *testing.T, c *harness.Cluster, topic string, partitions int32) {
	t.Helper()
	waitUntil(t, 30*time.Second, "leaders of "+topic+" on every broker", func() error {
		for _, b := range c.Brokers {
			if !b.Running() {
				continue
			}
			v, err := metadataView(b.Addr, topic)
			if err != nil {
				return fmt.Errorf("broker %d: %w", b.ID, err)
			}
			if int32(len(v)) != partitions {
				return fmt.Errorf("broker %d shows %d partitions", b.ID, len(v))
			}
			for p, pv := range v {
				if pv.Leader < 0 {
					return fmt.Errorf("broker %d: partition %d has no leader", b.ID, p)
				}
			}
		}
		return nil
	})
}

// startWithTopic starts a 3-broker cluster and creates topic with rf 3
// and min.insync.replicas 2, returning once every replica is in the ISR.
func startWithTopic(t *testing.T, topic string, partitions int32) (*harness.Cluster, *zk.Conn) {
	t.Helper()
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)
	return c, conn
}

// leaderNotController picks a broker other than the controller ctrl that
// leads a partition in states: killing it exercises the broker-failure
// election rather than a controller failover.
func leaderNotController(t *testing.T, c *harness.Cluster, states map[int32]partitionState, ctrl int32) int32 {
	t.Helper()
	for _, b := range c.Brokers {
		if b.ID != ctrl && len(partitionsLedBy(states, b.ID)) > 0 {
			return b.ID
		}
	}
	t.Fatalf("no non-controller broker leads a partition: %+v", states)
	return -1
}

// partitionsLedBy lists the partitions each broker leads, from the state znodes.
func partitionsLedBy(states map[int32]partitionState, id int32) []int32 {
	var out []int32
	for p, s := range states {
		if s.Leader == id {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func strp(s string) *string { return &s }

func metadataTopicID(t *testing.T, addr, topic string) [16]byte {
	t.Helper()
	resp, err := harness.MetadataFrom(testCtx(t, 5*time.Second), addr, topic)
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("Metadata %s from %s: %v", topic, addr, err)
	}
	return resp.Topics[0].TopicID
}

func metadataClusterID(t *testing.T, addr string) string {
	t.Helper()
	resp, err := harness.MetadataFrom(testCtx(t, 5*time.Second), addr, "__none__")
	if err != nil {
		t.Fatalf("Metadata from %s: %v", addr, err)
	}
	if resp.ClusterID == nil {
		return ""
	}
	return *resp.ClusterID
}

// waitFullISR waits until every partition's state znode lists rf replicas
// in its ISR.
func waitFullISR(t *testing.T, conn *zk.Conn, topic string, partitions int32, rf int) {
	t.Helper()
	waitISRSize(t, conn, topic, partitions, rf, 30*time.Second)
}

// waitInEveryISR waits until broker id is in the ISR of every partition of
// topic.
func waitInEveryISR(t *testing.T, conn *zk.Conn, topic string, partitions int32, id int32, timeout time.Duration) {
	t.Helper()
	waitUntil(t, timeout, fmt.Sprintf("broker %d in every ISR of %s", id, topic), func() error {
		states, err := readStates(conn, topic, partitions)
		if err != nil {
			return err
		}
		for part, s := range states {
			if !slices.Contains(s.ISR, id) {
				return fmt.Errorf("partition %d: %+v", part, s)
			}
		}
		return nil
	})
}
