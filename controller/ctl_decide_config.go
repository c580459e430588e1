package controller

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kbroker/kbroker/kafkazk"
)

// Topic config changes' decisions; ctl_config_change.go executes them.

// configChangeNode is a /config/changes notification not yet handled.
type configChangeNode struct {
	name string
	seq  int64
}

// newConfigChanges is the notifications in names with a sequence number
// above last (the last one handled), in the order given, each above the
// ones before it; names that are not notifications are skipped.
func newConfigChanges(last int64, names []string) []configChangeNode {
	var out []configChangeNode
	for _, n := range names {
		seq, err := kafkazk.SequenceNumber(n, kafkazk.ConfigChangePrefix)
		if err != nil || seq <= last {
			continue
		}
		last = seq
		out = append(out, configChangeNode{name: n, seq: seq})
	}
	return out
}

// lastConfigChangeOf is the highest sequence number in names, -1 for
// none: at failover the notifications present are history.
func lastConfigChangeOf(names []string) int64 {
	last := int64(-1)
	for _, n := range names {
		if seq, err := kafkazk.SequenceNumber(n, kafkazk.ConfigChangePrefix); err == nil && seq > last {
			last = seq
		}
	}
	return last
}

// configChangeTopic is the topic a change notification's entity names, if
// it is a topic the controller knows.
func configChangeTopic(ctx *controllerContext, entity string) (string, bool) {
	topic, ok := strings.CutPrefix(entity, kafkazk.ConfigTypeTopic+"/")
	if !ok {
		return "", false
	}
	if _, known := ctx.assignments[topic]; !known {
		return "", false
	}
	return topic, true
}

// brokerConfigChangeOf reports whether a change notification's entity is
// the dynamic configs of broker id or the cluster-wide defaults.
func brokerConfigChangeOf(entity string, id int32) bool {
	name, ok := kafkazk.BrokerConfigChange(entity)
	return ok && (kafkazk.IsDefaultBrokerEntity(name) || name == strconv.Itoa(int(id)))
}

// sortedTopics lists the topics the controller knows, in name order.
func sortedTopics(ctx *controllerContext) []string {
	out := make([]string, 0, len(ctx.assignments))
	for t := range ctx.assignments {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// uncleanSetting is the effective unclean.leader.election.enable of a
// topic with config overrides cfg: the override when it is "true" or
// "false", else the broker default.
func uncleanSetting(cfg map[string]string, brokerDefault bool) bool {
	switch cfg["unclean.leader.election.enable"] {
	case "true":
		return true
	case "false":
		return false
	}
	return brokerDefault
}

// uncleanEnabledPartitions is the partitions to elect once unclean
// election is enabled for topic: its Offline ones, none while it is being
// deleted.
func uncleanEnabledPartitions(ctx *controllerContext, topic string) []kafkazk.TopicPartition {
	var offline []kafkazk.TopicPartition
	for _, tp := range ctx.partitionsOfTopic(topic) {
		if ctx.states[tp] == partitionOffline && !ctx.topicsToDelete[topic] {
			offline = append(offline, tp)
		}
	}
	return offline
}
