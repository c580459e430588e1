package kafkazk

import (
	"reflect"
	"strings"
	"testing"
)

// The expected strings are Kafka's bytes as ZkData.scala writes them: field
// order, no spaces, strings where Kafka writes them.
func TestZNodeEncodingMatchesKafka(t *testing.T) {
	topicID, err := decodeUUID("mNrG5q9wTf2yYyLZ1s9wWQ")
	if err != nil {
		t.Fatal(err)
	}
	kb1 := []Endpoint{{Listener: "PLAINTEXT", Host: "kb1", Port: 9092, SecurityProtocol: "PLAINTEXT"}}
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"controller v2", controllerZNode{Version: 2, BrokerID: 1, Timestamp: 1732000000000}.encode(),
			`{"version":2,"brokerid":1,"timestamp":"1732000000000","kraftControllerEpoch":-1}`},
		{"controller v1", controllerZNode{Version: 1, BrokerID: 1, Timestamp: 1600000000000}.encode(),
			`{"version":1,"brokerid":1,"timestamp":"1600000000000"}`},
		{"controller_epoch", encodeControllerEpoch(3), `3`},
		{"broker v4", BrokerZNode{Version: 4, Endpoints: kb1, JmxPort: -1, Timestamp: 1732000000000}.encode(),
			`{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://kb1:9092"],"jmx_port":-1,"host":"kb1","timestamp":"1732000000000","port":9092,"version":4}`},
		{"broker v5", BrokerZNode{Version: 5, Endpoints: kb1, JmxPort: -1, Timestamp: 1732000000000, Rack: "r1",
			Features: map[string]FeatureRange{"metadata.version": {1, 21}}}.encode(),
			`{"features":{"metadata.version":{"min_version":1,"max_version":21}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://kb1:9092"],"rack":"r1","jmx_port":-1,"host":"kb1","timestamp":"1732000000000","port":9092,"version":5}`},
		{"topic v3", TopicZNode{Version: 3, TopicID: topicID, Partitions: ReplicaMap{0: {1, 2, 3}, 1: {2, 3, 1}}}.Encode(),
			`{"partitions":{"0":[1,2,3],"1":[2,3,1]},"topic_id":"mNrG5q9wTf2yYyLZ1s9wWQ","adding_replicas":{},"removing_replicas":{},"version":3}`},
		{"topic v2", TopicZNode{Version: 2, Partitions: ReplicaMap{0: {1, 2, 3}}}.Encode(),
			`{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}`},
		{"partition state", PartitionStateZNode{ControllerEpoch: 1, Leader: 1, LeaderEpoch: 0, ISR: []int32{1, 2, 3}}.Encode(),
			`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}`},
		{"partition state offline", PartitionStateZNode{ControllerEpoch: 2, Leader: -1, LeaderEpoch: 4, ISR: []int32{3}}.Encode(),
			`{"controller_epoch":2,"leader":-1,"version":1,"leader_epoch":4,"isr":[3]}`},
		{"isr change", EncodePartitionList([]TopicPartition{{"topic-a", 0}, {"topic-b", 0}}),
			`{"version":1,"partitions":[{"topic":"topic-a","partition":0},{"topic":"topic-b","partition":0}]}`},
		{"log dir event", LogDirEventZNode{Broker: 2, Event: LogDirFailureEvent}.Encode(),
			`{"version":1,"broker":2,"event":1}`},
		{"topic config", encodeConfigZNode(map[string]string{"unclean.leader.election.enable": "true", "min.insync.replicas": "2"}),
			`{"version":1,"config":{"min.insync.replicas":"2","unclean.leader.election.enable":"true"}}`},
		{"config change", EncodeConfigChange("topics/orders"), `{"version":2,"entity_path":"topics/orders"}`},
		{"config change default entity", EncodeConfigChange("clients/<default>"), `{"version":2,"entity_path":"clients/<default>"}`},
		{"reassign partitions", encodeReassignPartitions([]reassignment{{TopicPartition{"orders", 0}, []int32{1, 2, 4}}}),
			`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,4]}]}`},
		{"preferred replica election", EncodePartitionList([]TopicPartition{{"orders", 0}}),
			`{"version":1,"partitions":[{"topic":"orders","partition":0}]}`},
		{"cluster id", encodeClusterID("gL9yRMv7SXKk6n0TQ4a8Pw"), `{"version":"1","id":"gL9yRMv7SXKk6n0TQ4a8Pw"}`},
		{"feature v2", featureZNode{Version: 2, Enabled: true, Features: map[string]FeatureRange{"metadata.version": {Max: 21}}}.encode(),
			`{"features":{"metadata.version":{"max_version_level":21}},"version":2,"status":1}`},
		{"feature disabled", featureZNode{Version: 1}.encode(), `{"features":{},"version":1,"status":0}`},
		{"producer id block", ProducerIDBlockZNode{Broker: 1, BlockStart: 0, BlockEnd: 999}.Encode(),
			`{"version":1,"broker":1,"block_start":"0","block_end":"999"}`},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestZNodeRoundTrips(t *testing.T) {
	broker := BrokerZNode{Version: 5, JmxPort: 9999, Timestamp: 42, Rack: "a",
		Endpoints: []Endpoint{
			{Listener: "INTERNAL", Host: "10.0.0.1", Port: 9093, SecurityProtocol: "PLAINTEXT"},
			{Listener: "EXTERNAL", Host: "::1", Port: 9094, SecurityProtocol: "SASL_SSL"},
		},
		Features: map[string]FeatureRange{"metadata.version": {1, 21}, "kraft.version": {0, 1}}}
	b := broker.encode()
	if !strings.Contains(string(b), `"EXTERNAL://[::1]:9094"`) || !strings.Contains(string(b), `"host":"10.0.0.1","timestamp":"42","port":9093`) {
		t.Errorf("broker encoding %s", b)
	}
	gotBroker, err := DecodeBrokerZNode(b)
	if err != nil || !reflect.DeepEqual(gotBroker, broker) {
		t.Errorf("broker round trip: %+v %v", gotBroker, err)
	}

	topic := TopicZNode{Version: 3, TopicID: [16]byte{1, 2, 3}, Partitions: ReplicaMap{0: {1}, 2: {2}, 10: {3}},
		Adding: ReplicaMap{0: {4}}, Removing: ReplicaMap{0: {1}}}
	b = topic.Encode()
	if !strings.HasPrefix(string(b), `{"partitions":{"0":[1],"2":[2],"10":[3]}`) {
		t.Errorf("partitions not in numeric order: %s", b)
	}
	gotTopic, err := DecodeTopicZNode(b)
	if err != nil || !reflect.DeepEqual(gotTopic, topic) {
		t.Errorf("topic round trip: %+v %v", gotTopic, err)
	}

	st := PartitionStateZNode{Leader: 2, LeaderEpoch: 7, ISR: []int32{2}, ControllerEpoch: 3, LeaderRecoveryState: LeaderRecovering}
	gotState, err := DecodePartitionStateZNode(st.Encode())
	if err != nil || !reflect.DeepEqual(gotState, st) {
		t.Errorf("state round trip: %+v %v", gotState, err)
	}

	c := controllerZNode{Version: 2, BrokerID: 3, Timestamp: 5}
	if got, err := decodeControllerZNode(c.encode()); err != nil || got != c {
		t.Errorf("controller round trip: %+v %v", got, err)
	}
	fz := featureZNode{Version: 1, Enabled: true, Features: map[string]FeatureRange{"metadata.version": {1, 7}}}
	if got, err := decodeFeatureZNode(fz.encode()); err != nil || !reflect.DeepEqual(got, fz) {
		t.Errorf("feature round trip: %+v %v", got, err)
	}
	pb := ProducerIDBlockZNode{Broker: 1, BlockStart: 1000, BlockEnd: 1999}
	if got, err := DecodeProducerIDBlockZNode(pb.Encode()); err != nil || got != pb {
		t.Errorf("producer id block round trip: %+v %v", got, err)
	}
	rs := []reassignment{{TopicPartition{"t", 1}, []int32{3, 4}}}
	if got, err := decodeReassignPartitions(encodeReassignPartitions(rs)); err != nil || !reflect.DeepEqual(got, rs) {
		t.Errorf("reassign round trip: %+v %v", got, err)
	}
	if got, err := DecodeLogDirEventZNode(LogDirEventZNode{Broker: 4, Event: 1}.Encode()); err != nil || got.Broker != 4 || got.Event != 1 {
		t.Errorf("log dir event round trip: %+v %v", got, err)
	}
	cfg := map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}
	if got, err := DecodeConfigZNode(encodeConfigZNode(cfg)); err != nil || !reflect.DeepEqual(got, cfg) {
		t.Errorf("config round trip: %v %v", got, err)
	}
	if _, err := DecodeConfigZNode([]byte(`{"version":1}`)); err == nil {
		t.Error("config without config accepted")
	}
	if got, err := DecodeConfigChange(EncodeConfigChange("topics/x")); err != nil || got != "topics/x" {
		t.Errorf("config change round trip: %q %v", got, err)
	}
	if got, err := DecodeControllerEpoch(encodeControllerEpoch(12)); err != nil || got != 12 {
		t.Errorf("controller epoch round trip: %d %v", got, err)
	}
}

// Kafka's readers: a few keys required, everything else optional, key order
// free, unknown keys ignored.
func TestZNodeDecodingIsLenient(t *testing.T) {
	// Old registration without protocol map or features, keys reordered.
	b, err := DecodeBrokerZNode([]byte(`{"version":4,"jmx_port":-1,"endpoints":["SSL://h:9093"],"extra":true}`))
	if err != nil || len(b.Endpoints) != 1 || b.Endpoints[0].SecurityProtocol != "SSL" || b.Rack != "" {
		t.Errorf("minimal broker: %+v %v", b, err)
	}
	if _, err := DecodeBrokerZNode([]byte(`{"version":4,"endpoints":[]}`)); err == nil {
		t.Error("broker without jmx_port accepted")
	}
	if _, err := DecodeBrokerZNode([]byte(`{"version":4,"jmx_port":-1}`)); err == nil {
		t.Error("broker v4 without endpoints accepted")
	}
	if _, err := DecodeBrokerZNode([]byte(`{"version":4,"jmx_port":-1,"endpoints":["CUSTOM://h:1"]}`)); err == nil {
		t.Error("listener without protocol accepted")
	}
	top, err := DecodeTopicZNode([]byte(`{"version":1,"partitions":{"1":[2],"0":[1]}}`))
	if err != nil || len(top.Partitions) != 2 || top.TopicID != ([16]byte{}) || top.Adding != nil {
		t.Errorf("old topic: %+v %v", top, err)
	}
	if _, err := DecodeTopicZNode([]byte(`{"version":3,"partitions":{"x":[1]}}`)); err == nil {
		t.Error("non-numeric partition accepted")
	}
	st, err := DecodePartitionStateZNode([]byte(`{"isr":[1],"leader_epoch":2,"leader":1,"controller_epoch":9}`))
	if err != nil || st.Leader != 1 || st.ControllerEpoch != 9 || st.LeaderRecoveryState != LeaderRecovered {
		t.Errorf("state without version: %+v %v", st, err)
	}
	if _, err := DecodePartitionStateZNode([]byte(`{"leader":1,"leader_epoch":2,"isr":[1]}`)); err == nil {
		t.Error("state without controller_epoch accepted")
	}
	if _, err := decodeControllerZNode([]byte(`{"version":2}`)); err == nil {
		t.Error("controller without brokerid accepted")
	}
	if got, err := decodeControllerZNode([]byte(`{"brokerid":4}`)); err != nil || got.BrokerID != 4 {
		t.Errorf("controller with only brokerid: %+v %v", got, err)
	}
	if _, err := DecodePartitionList([]byte(`{"version":1,"partitions":[{"topic":"a"}]}`)); err == nil {
		t.Error("partition entry without partition accepted")
	}
	if _, err := DecodeControllerEpoch([]byte("x")); err == nil {
		t.Error("bad controller epoch accepted")
	}
	for _, bad := range []string{``, `[]`, `null`, `{`} {
		if _, err := DecodePartitionStateZNode([]byte(bad)); err == nil {
			t.Errorf("state %q accepted", bad)
		}
	}
	if id, err := decodeClusterID([]byte(`{"id":"abc","version":"1"}`)); err != nil || id != "abc" {
		t.Errorf("cluster id: %q %v", id, err)
	}
}

func TestZNodePaths(t *testing.T) {
	for got, want := range map[string]string{
		BrokerIDPath(3):                  "/brokers/ids/3",
		TopicPath("orders"):              "/brokers/topics/orders",
		PartitionStatePath("orders", 11): "/brokers/topics/orders/partitions/11/state",
		ConfigEntityPath("topics", "o"):  "/config/topics/o",
		DeleteTopicPath("o"):             "/admin/delete_topics/o",
	} {
		if got != want {
			t.Errorf("path %s, want %s", got, want)
		}
	}
	if n, err := SequenceNumber("isr_change_0000000042", IsrChangePrefix); err != nil || n != 42 {
		t.Errorf("sequence number: %d %v", n, err)
	}
	if _, err := ParseBrokerID("x"); err == nil {
		t.Error("bad broker id accepted")
	}
}
