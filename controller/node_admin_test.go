package controller

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// SetTopicConfig replaces the overrides and writes Kafka's change
// notification.
func TestSetTopicConfigNotification(t *testing.T) {
	h := newCtlHarness(t, 1)
	h.createTopic("orders", map[int32][]int32{0: {1}})
	n := &Node{zk: h.admin, status: noController}
	if err := n.SetTopicConfig(t.Context(), "orders", map[string]string{"retention.ms": "1000"}); err != nil {
		t.Fatal(err)
	}
	data, _, err := h.admin.Get(configChangesPath + "/config_change_0000000000")
	if err != nil || string(data) != `{"version":2,"entity_path":"topics/orders"}` {
		t.Errorf("notification %s %v", data, err)
	}
	cfg, _, _ := h.admin.Get(configEntityPath(configTypeTopic, "orders"))
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
