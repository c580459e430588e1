package controller

import (
	"slices"
	"sort"

	"github.com/kbroker/kbroker/kafkazk"
)

// Topic and partition changes' decisions; ctl_topic_change.go and
// loadTopic execute them.

// decideTopicChange compares the topics the controller knows with the
// children of /brokers/topics read: gone (deletion completed elsewhere)
// leave the context, fresh are loaded and get their partitions created.
// Both sorted.
func decideTopicChange(ctx *controllerContext, topics []string) (gone, fresh []string) {
	for t := range ctx.assignments {
		if !slices.Contains(topics, t) {
			gone = append(gone, t)
		}
	}
	sort.Strings(gone)
	for _, t := range topics {
		if _, known := ctx.assignments[t]; !known {
			fresh = append(fresh, t)
		}
	}
	sort.Strings(fresh)
	return gone, fresh
}

// topicLoad is a topic znode as the context takes it.
type topicLoad struct {
	// rewrite: the znode had no topic id; znode, with newID, is to be
	// written conditionally on the version read.
	rewrite bool
	znode   kafkazk.TopicZNode
	id      [16]byte
	// assignments is the topic's partitions.
	assignments map[kafkazk.TopicPartition]replicaAssignment
}

// decideTopicLoad takes the topic znode read for topic. A znode without a
// topic id gets newID (drawn by the executor from Config.NewTopicID), as a
// 3.x controller does; a zero newID (an IBP without topic ids) leaves it
// without.
func decideTopicLoad(topic string, z kafkazk.TopicZNode, newID [16]byte) topicLoad {
	d := topicLoad{znode: z, id: z.TopicID, assignments: map[kafkazk.TopicPartition]replicaAssignment{}}
	if z.TopicID == ([16]byte{}) && newID != ([16]byte{}) {
		d.rewrite = true
		d.znode.TopicID, d.znode.Version = newID, 3
		d.id = newID
	}
	for p, rs := range z.Partitions {
		d.assignments[kafkazk.TopicPartition{Topic: topic, Partition: p}] = replicaAssignment{Replicas: rs, Adding: z.Adding[p], Removing: z.Removing[p]}
	}
	return d
}

// decidePartitionModifications is the partitions of topic that were not
// among before (the partition numbers known before the topic znode was
// read again), to be created; none for a topic being deleted
// (ignored: partitions were added but are left alone).
func decidePartitionModifications(ctx *controllerContext, topic string, before map[int32]bool) (added []kafkazk.TopicPartition, ignored bool) {
	for _, tp := range ctx.partitionsOfTopic(topic) {
		if !before[tp.Partition] {
			added = append(added, tp)
		}
	}
	if len(added) > 0 && ctx.topicsToDelete[topic] {
		return nil, true
	}
	return added, false
}
