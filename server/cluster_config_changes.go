package server

import (
	"context"

	"github.com/kbroker/kbroker/zkbroker"
)

// Topic config changes in cluster mode. AlterConfigs and
// IncrementalAlterConfigs are served by the controller, which writes
// /config/topics/<t> and a /config/changes notification; every broker
// watches the notifications (Kafka's ZkNodeChangeNotificationListener with
// TopicConfigHandler), re-reads the topic's overrides and puts them into
// force on the logs it hosts. Without this, a follower — or the next
// leader — would keep the old retention and segment settings until it
// reopened the logs.

// topicConfigWatcher delivers the topics named by config change
// notifications; zkbroker.Node implements it.
type topicConfigWatcher interface {
	WatchTopicConfigChanges(ctx context.Context, fn func(topic string))
}

var _ topicConfigWatcher = (*zkbroker.Node)(nil)

// runTopicConfigChanges applies topic config changes until ctx ends. Run
// starts it next to the ZooKeeper node in cluster mode.
func (b *Broker) runTopicConfigChanges(ctx context.Context, w topicConfigWatcher) {
	w.WatchTopicConfigChanges(ctx, b.topicConfigChanged)
}

// topicConfigChanged re-reads a topic's overrides and applies them. A topic
// this broker does not know yet needs nothing: rebuildTopics reads its
// configs when UpdateMetadata brings it.
func (b *Broker) topicConfigChanged(topic string) {
	if b.topic(topic) == nil {
		return
	}
	// Read outside the cluster lock: it is a ZooKeeper round trip.
	cfgs, err := b.cluster.control.TopicConfigs(topic)
	if err != nil {
		b.logger.Warn("cannot read changed topic configs; keeping the old ones", "topic", topic, "err", err)
		return
	}
	if cfgs == nil {
		cfgs = map[string]string{}
	}
	// The cluster lock keeps a concurrent rebuildTopics from putting the
	// old overrides back.
	b.cluster.mu.Lock()
	b.useTopicConfigs(topic, cfgs)
	b.cluster.mu.Unlock()
	b.logger.Info("topic configs changed", "topic", topic, "configs", cfgs)
}
