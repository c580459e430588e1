package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
	"github.com/kbroker/kbroker/replica"
)

// configControl answers TopicConfigs from a map, or fails.
type configControl struct {
	fakeControl
	configs map[string]map[string]string
	err     error
	reads   []string
}

func (c *configControl) TopicConfigs(name string) (map[string]string, error) {
	c.reads = append(c.reads, name)
	return c.configs[name], c.err
}

// fakeWatcher delivers the given notifications, then waits for the end.
type fakeWatcher []string

func (w fakeWatcher) WatchTopicConfigChanges(ctx context.Context, fn func(string)) {
	for _, t := range w {
		fn(t)
	}
	<-ctx.Done()
}

func TestTopicConfigChangesReachHostedLogs(t *testing.T) {
	control := &configControl{configs: map[string]map[string]string{
		"orders": {"retention.ms": "60000", "segment.bytes": "1048576", "min.insync.replicas": "2"},
	}}
	b := clusterBroker(control, map[string][]PartitionState{
		"orders": {{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}, {Leader: 2, Replicas: []int32{2, 1}, ISR: []int32{2, 1}}},
		"audit":  {{Leader: 1, Replicas: []int32{1}, ISR: []int32{1}}},
	})
	b.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	logs := []*logstore.FileLog{logtest.New(t, logstore.DefaultConfig()), logtest.New(t, logstore.DefaultConfig())}
	orders := b.topic("orders")
	orders.Partitions = []*replica.Partition{
		replica.New("orders", 0, orders.ID, logs[0], 0, replica.Options{LocalID: 1}),
		replica.New("orders", 1, orders.ID, logs[1], 0, replica.Options{LocalID: 1}),
	}
	orders.Configs = map[string]string{}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.runTopicConfigChanges(ctx, fakeWatcher{"orders", "nosuch"})
	}()
	cancel()
	<-done

	for i, l := range logs {
		if c := l.Config(); c.RetentionMs != 60000 || c.SegmentBytes != 1048576 {
			t.Errorf("orders-%d log config: retention %d, segment %d", i, c.RetentionMs, c.SegmentBytes)
		}
	}
	if got := b.topic("orders").Configs["retention.ms"]; got != "60000" {
		t.Errorf("topic table overrides: %v", b.topic("orders").Configs)
	}
	if len(control.reads) != 1 || control.reads[0] != "orders" {
		t.Errorf("read configs of %v; an unknown topic needs no read", control.reads)
	}

	// A failed read keeps what is in force.
	control.err = errors.New("zk: connection closed")
	control.configs["orders"] = map[string]string{"retention.ms": "1"}
	b.topicConfigChanged("orders")
	if c := logs[0].Config(); c.RetentionMs != 60000 {
		t.Errorf("after a failed read the retention became %d", c.RetentionMs)
	}

	// Removing an override goes back to the broker default.
	control.err = nil
	control.configs["orders"] = nil
	b.topicConfigChanged("orders")
	if c := logs[0].Config(); c.RetentionMs != b.cfg.LogDefaults().RetentionMs {
		t.Errorf("override removed, retention %d, want the default %d", c.RetentionMs, b.cfg.LogDefaults().RetentionMs)
	}
	if len(b.topic("orders").Configs) != 0 {
		t.Errorf("overrides left: %v", b.topic("orders").Configs)
	}
}
