package zkbroker

import (
	"errors"
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// SetTopicConfig replaces the overrides and writes Kafka's change
// notification.
func TestSetTopicConfigNotification(t *testing.T) {
	admin := zkstore.NewMem().Connect()
	if err := kafkazk.CreateTopLevelPaths(admin); err != nil {
		t.Fatal(err)
	}
	noID := func() [16]byte { return [16]byte{0: 0xAB, 15: 1} }
	if _, err := kafkazk.CreateTopic(admin, "orders", -1, -1, map[int32][]int32{0: {1}}, nil, false, nil, noID); err != nil {
		t.Fatal(err)
	}
	n := &Node{zk: admin, status: kafkazk.NoController}
	if err := n.SetTopicConfig(t.Context(), "orders", map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	data, _, err := admin.Get(kafkazk.ConfigChangesPath + "/config_change_0000000000")
	if err != nil || string(data) != `{"version":2,"entity_path":"topics/orders"}` {
		t.Errorf("notification %s %v", data, err)
	}
	cfg, _, _ := admin.Get(kafkazk.ConfigEntityPath(kafkazk.ConfigTypeTopic, "orders"))
	if string(cfg) != `{"version":1,"config":{"retention.ms":"1000"}}` {
		t.Errorf("config %s", cfg)
	}
	if err := n.SetTopicConfig(t.Context(), "nope", nil); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v", err)
	}
	if _, err := n.CreateTopic("x", 1, 1, nil, nil, false); !errors.Is(err, kerr.NotController) {
		t.Errorf("CreateTopic off the controller: %v", err)
	}
}

// Topic creation on a controller that handles a registered broker as dead
// assigns no replica to it, as Kafka's assignment among the metadata
// cache's live brokers would not.
func TestWithoutBrokersHidesFencedRegistrations(t *testing.T) {
	z := zkstore.NewMem()
	admin := z.Connect()
	if err := kafkazk.CreateTopLevelPaths(admin); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{1, 2, 3} {
		reg := kafkazk.BrokerZNode{Version: 5, JmxPort: -1,
			Endpoints: []kafkazk.Endpoint{{Listener: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"}}}
		if _, err := kafkazk.RegisterBroker(z.Connect(), id, reg); err != nil {
			t.Fatal(err)
		}
	}
	hidden := withoutBrokers{admin, []int32{2}}
	noID := func() [16]byte { return [16]byte{0: 0xAB, 15: 2} }
	if _, err := kafkazk.CreateTopic(hidden, "orders", 6, 2, nil, nil, false, kafkazk.RandIntn, noID); err != nil {
		t.Fatal(err)
	}
	data, _, err := admin.Get(kafkazk.TopicPath("orders"))
	if err != nil {
		t.Fatal(err)
	}
	tz, err := kafkazk.DecodeTopicZNode(data)
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range tz.Partitions {
		if slices.Contains(rs, 2) {
			t.Errorf("partition %d assigned to hidden broker 2: %v", p, rs)
		}
	}
	// Three brokers registered, two visible: replication factor 3 fails.
	if _, err := kafkazk.CreateTopic(hidden, "wide", 1, 3, nil, nil, false, kafkazk.RandIntn, noID); !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Errorf("rf 3 over two visible brokers: %v", err)
	}
}
