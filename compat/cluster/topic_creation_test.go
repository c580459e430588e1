package cluster

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 3 acceptance: three brokers, a topic with rf 3 and 6 partitions
// created by the stock tool; every broker describes it as the state znodes
// say; every znode payload has Kafka 3.x's shape.
func TestClusterTopicCreation(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	const topic = "orders"

	out, stderr, err := harness.RunTool(t, testCtx(t, 2*time.Minute), "kafka-topics",
		"--bootstrap-server", c.Brokers[1].Addr, "--create", "--topic", topic,
		"--replication-factor", "3", "--partitions", "6")
	if err != nil {
		t.Fatalf("kafka-topics --create: %v\n%s\n%s", err, out, stderr)
	}
	waitLeaders(t, c, topic, 6)

	// The state znodes are the truth; each broker must tell the same, both
	// to the tool and in its own Metadata answer. ISRs settle once the
	// followers have caught up on an empty log; wait for them to be full.
	var states map[int32]partitionState
	waitUntil(t, 20*time.Second, "full ISRs in the state znodes", func() error {
		var err error
		if states, err = readStates(conn, topic, 6); err != nil {
			return err
		}
		for p, s := range states {
			if len(s.ISR) != 3 {
				return fmt.Errorf("partition %d: %+v", p, s)
			}
		}
		return nil
	})
	assignment, err := topicAssignment(conn, topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range c.Brokers {
		described := describeTool(t, b.Addr, topic)
		meta, err := metadataView(b.Addr, topic)
		if err != nil {
			t.Fatalf("Metadata from broker %d: %v", b.ID, err)
		}
		for p := range int32(6) {
			s := states[p]
			for src, v := range map[string]partitionView{"kafka-topics --describe": described[p], "Metadata": meta[p]} {
				if v.Leader != s.Leader || !sameSet(v.ISR, s.ISR) || fmt.Sprint(v.Replicas) != fmt.Sprint(assignment[p]) {
					t.Errorf("broker %d %s partition %d: %v; znodes: leader %d isr %v replicas %v",
						b.ID, src, p, v, s.Leader, s.ISR, assignment[p])
				}
			}
			if meta[p].LeaderEpoch != s.LeaderEpoch {
				t.Errorf("broker %d Metadata partition %d leader epoch %d, state znode %d", b.ID, p, meta[p].LeaderEpoch, s.LeaderEpoch)
			}
		}
	}
	checkZnodes(t, c, conn, topic, assignment)
}

// checkZnodes compares every znode (Kafka's ZkData.scala payloads) that a
// fresh cluster with one topic has, key for key and type for type.
func checkZnodes(t *testing.T, c *harness.Cluster, conn *zk.Conn, topic string, assignment map[int32][]int32) {
	t.Helper()
	get := func(path string) []byte {
		data, _, err := conn.Get(path)
		if err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		return data
	}

	// /controller: version 2, a live broker, ephemeral.
	data, stat, err := conn.Get("/controller")
	if err != nil {
		t.Fatalf("get /controller: %v", err)
	}
	if obj, err := checkShape("/controller", data, controllerShape); err != nil {
		t.Error(err)
	} else {
		if intOf(obj["version"]) != 2 || intOf(obj["kraftControllerEpoch"]) != -1 {
			t.Errorf("/controller %s: want version 2 and kraftControllerEpoch -1", data)
		}
		if id := intOf(obj["brokerid"]); c.Broker(int32(id)) == nil {
			t.Errorf("/controller names broker %d, not one of ours", id)
		}
	}
	if stat.EphemeralOwner == 0 {
		t.Error("/controller is not ephemeral")
	}

	// /controller_epoch: plain decimal text, >= 1 (the first controller).
	epochText := string(get("/controller_epoch"))
	if e, err := strconv.Atoi(epochText); err != nil || e < 1 {
		t.Errorf("/controller_epoch %q: want decimal text >= 1", epochText)
	}

	// /brokers/ids/<id>: ephemeral, endpoints as advertised.
	children, _, err := conn.Children("/brokers/ids")
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 3 {
		t.Errorf("/brokers/ids children %v, want 3", children)
	}
	for _, b := range c.Brokers {
		path := fmt.Sprintf("/brokers/ids/%d", b.ID)
		data, stat, err := conn.Get(path)
		if err != nil {
			t.Errorf("get %s: %v", path, err)
			continue
		}
		if stat.EphemeralOwner == 0 {
			t.Errorf("%s is not ephemeral", path)
		}
		sh := brokerShapeV5
		if strings.Contains(string(data), `"version":4`) {
			sh = brokerShapeV4
		}
		obj, err := checkShape(path, data, sh)
		if err != nil {
			t.Error(err)
			continue
		}
		host, port, _ := strings.Cut(b.Addr, ":")
		ep := fmt.Sprint(obj["endpoints"])
		if ep != "[PLAINTEXT://"+b.Addr+"]" || obj["host"] != host || fmt.Sprint(intOf(obj["port"])) != port {
			t.Errorf("%s %s: endpoints/host/port do not match the advertised listener %s", path, data, b.Addr)
		}
		if fmt.Sprint(obj["listener_security_protocol_map"]) != "map[PLAINTEXT:PLAINTEXT]" {
			t.Errorf("%s: listener_security_protocol_map %v", path, obj["listener_security_protocol_map"])
		}
		if intOf(obj["jmx_port"]) != -1 {
			t.Errorf("%s: jmx_port %v, want -1 (no JMX)", path, obj["jmx_port"])
		}
		if v := intOf(obj["version"]); v == 5 {
			if err := featuresShapeOK(obj["features"]); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		} else if v != 4 {
			t.Errorf("%s: version %d, want 4 or 5", path, v)
		}
	}

	// /brokers/topics/<t>: version 3 with a topic id matching Metadata's.
	path := "/brokers/topics/" + topic
	if obj, err := checkShape(path, get(path), topicShape); err != nil {
		t.Error(err)
	} else {
		if intOf(obj["version"]) != 3 {
			t.Errorf("%s: version %v, want 3", path, obj["version"])
		}
		id, _ := obj["topic_id"].(string)
		if !isUUIDBase64(id) {
			t.Errorf("%s: topic_id %q is not a 22-character base64url UUID", path, id)
		} else if mid := metadataTopicID(t, c.Brokers[0].Addr, topic); base64.RawURLEncoding.EncodeToString(mid[:]) != id {
			t.Errorf("%s: topic_id %s, Metadata says %x", path, id, mid)
		}
		if len(obj["adding_replicas"].(map[string]any)) != 0 || len(obj["removing_replicas"].(map[string]any)) != 0 {
			t.Errorf("%s: adding/removing replicas not empty outside a reassignment", path)
		}
		if len(assignment) != 6 {
			t.Errorf("%s: %d partitions, want 6", path, len(assignment))
		}
		for p, rs := range assignment {
			if len(rs) != 3 || !sameSet(rs, []int32{1, 2, 3}) {
				t.Errorf("%s: partition %d replicas %v, want a permutation of 1,2,3", path, p, rs)
			}
		}
	}

	// Partition state: version 1, persistent, no leader_recovery_state
	// after a clean creation.
	for p := range int32(6) {
		path := statePath(topic, p)
		data, stat, err := conn.Get(path)
		if err != nil {
			t.Errorf("get %s: %v", path, err)
			continue
		}
		if stat.EphemeralOwner != 0 {
			t.Errorf("%s is ephemeral; Kafka creates it persistent", path)
		}
		obj, err := checkShape(path, data, stateShape)
		if err != nil {
			t.Error(err)
			continue
		}
		if _, ok := obj["leader_recovery_state"]; ok {
			t.Errorf("%s: leader_recovery_state written after a clean election", path)
		}
		if intOf(obj["version"]) != 1 || intOf(obj["leader_epoch"]) < 0 {
			t.Errorf("%s: version/leader_epoch %s", path, data)
		}
		if leader := intOf(obj["leader"]); leader != int64(assignment[p][0]) {
			t.Errorf("%s: leader %d, want the preferred replica %d", path, leader, assignment[p][0])
		}
	}

	// /cluster/id: {"version":"1","id":<22 chars>}, the id Metadata reports.
	data = get("/cluster/id")
	if obj, err := checkShape("/cluster/id", data, clusterIDShape); err != nil {
		t.Error(err)
	} else {
		if obj["version"] != "1" {
			t.Errorf("/cluster/id version %v, want the string \"1\"", obj["version"])
		}
		id := obj["id"].(string)
		if !isUUIDBase64(id) {
			t.Errorf("/cluster/id id %q is not a 22-character base64url UUID", id)
		}
		for _, b := range c.Brokers {
			if mid := metadataClusterID(t, b.Addr); mid != id {
				t.Errorf("broker %d Metadata cluster id %q, /cluster/id %q", b.ID, mid, id)
			}
		}
	}
}
