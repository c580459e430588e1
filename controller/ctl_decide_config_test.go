package controller

import (
	"slices"
	"testing"

	"github.com/kbroker/kbroker/kafkazk"
)

func TestNewConfigChanges(t *testing.T) {
	names := []string{"config_change_0000000003", "config_change_0000000001", "junk", "config_change_0000000005", "config_change_0000000004"}
	got := newConfigChanges(1, names)
	want := []configChangeNode{{"config_change_0000000003", 3}, {"config_change_0000000005", 5}}
	if !slices.Equal(got, want) {
		t.Errorf("new changes %v, want %v", got, want)
	}
	if got := newConfigChanges(5, names); len(got) != 0 {
		t.Errorf("nothing new: %v", got)
	}
	if last := lastConfigChangeOf(names); last != 5 {
		t.Errorf("last %d", last)
	}
	if last := lastConfigChangeOf([]string{"junk"}); last != -1 {
		t.Errorf("last of none %d", last)
	}
}

func TestConfigChangeTopic(t *testing.T) {
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{{Topic: "orders", Partition: 0}: {1}})
	if topic, ok := configChangeTopic(ctx, "topics/orders"); !ok || topic != "orders" {
		t.Errorf("known topic: %q %v", topic, ok)
	}
	for _, entity := range []string{"topics/nope", "brokers/1", "users/orders"} {
		if topic, ok := configChangeTopic(ctx, entity); ok {
			t.Errorf("%s: %q", entity, topic)
		}
	}
}

func TestUncleanSetting(t *testing.T) {
	for _, c := range []struct {
		cfg           map[string]string
		dflt, enabled bool
	}{
		{nil, false, false},
		{nil, true, true},
		{map[string]string{"unclean.leader.election.enable": "true"}, false, true},
		{map[string]string{"unclean.leader.election.enable": "false"}, true, false},
		{map[string]string{"unclean.leader.election.enable": "yes"}, true, true},
		{map[string]string{"retention.ms": "5"}, false, false},
	} {
		if got := uncleanSetting(c.cfg, c.dflt); got != c.enabled {
			t.Errorf("%v default %v: %v", c.cfg, c.dflt, got)
		}
	}
}

func TestUncleanEnabledPartitions(t *testing.T) {
	p0, p1, p2 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "t", Partition: 1}, kafkazk.TopicPartition{Topic: "t", Partition: 2}
	ctx := decideContext([]int32{1}, map[kafkazk.TopicPartition][]int32{p0: {1}, p1: {2}, p2: {2}, {Topic: "u", Partition: 0}: {2}})
	ctx.states[p0] = partitionOnline
	ctx.states[p1] = partitionOffline
	ctx.states[p2] = partitionOffline
	ctx.states[kafkazk.TopicPartition{Topic: "u", Partition: 0}] = partitionOffline
	if got := uncleanEnabledPartitions(ctx, "t"); !slices.Equal(got, []kafkazk.TopicPartition{p1, p2}) {
		t.Errorf("offline %v", got)
	}
	ctx.topicsToDelete["t"] = true
	if got := uncleanEnabledPartitions(ctx, "t"); len(got) != 0 {
		t.Errorf("being deleted: %v", got)
	}
}
