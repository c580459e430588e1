package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// storageErrorPartitions reads a broker's LeaderAndIsr response: the
// partitions it answered KAFKA_STORAGE_ERROR for sit on a failed log
// directory. requestErr is the whole request's error (then nothing
// else counts). Partitions are named by topic name (v4 and below) or
// topic id, resolved through the context.
func storageErrorPartitions(ctx *controllerContext, r *kmsg.LeaderAndISRResponse) (failed []kafkazk.TopicPartition, requestErr error) {
	if r.ErrorCode != 0 {
		return nil, kerr.ErrorForCode(r.ErrorCode)
	}
	names := map[[16]byte]string{}
	for t, id := range ctx.topicIDs {
		names[id] = t
	}
	check := func(topic string, p kmsg.LeaderAndISRResponseTopicPartition) {
		if p.ErrorCode == kerr.KafkaStorageError.Code {
			failed = append(failed, kafkazk.TopicPartition{Topic: topic, Partition: p.Partition})
		}
	}
	for _, p := range r.Partitions {
		check(p.Topic, p)
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			check(names[t.TopicID], p)
		}
	}
	return failed, nil
}

// replicasOfDeadBroker splits a dead broker's replicas: those of topics
// being deleted have their StopReplica (delete) to send again once it is
// back (deleting); the others go OfflineReplica.
func replicasOfDeadBroker(ctx *controllerContext, id int32) (offline, deleting []kafkazk.TopicPartition) {
	for _, tp := range ctx.partitionsOnBroker(id) {
		if ctx.topicsToDelete[tp.Topic] {
			deleting = append(deleting, tp)
			continue
		}
		offline = append(offline, tp)
	}
	return offline, deleting
}
