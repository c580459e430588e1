package server

// CreatePartitions, versions 0-3.
//
// Grows a topic; a manual assignment must give exactly the new partitions,
// each with as many replicas as the existing ones (1 here) on registered
// brokers. Messages follow Kafka's controller.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.CreatePartitions.Int16(), 0, 3, handleCreatePartitions) }

func handleCreatePartitions(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.CreatePartitionsRequest)
	resp := kmsg.NewPtrCreatePartitionsResponse()
	resp.SetVersion(req.Version)
	count := map[string]int{}
	for _, rt := range r.Topics {
		count[rt.Topic]++
	}
	for _, rt := range r.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = rt.Topic
		var err error
		switch {
		case count[rt.Topic] > 1:
			err = newTopicError(kerr.InvalidRequest, "Duplicate topic name.")
		case !b.topicAllowed(req, kmsg.ACLOperationAlter, rt.Topic):
			err = newTopicError(kerr.TopicAuthorizationFailed, "The topic authorization is failed.")
		default:
			err = b.createPartitionsEntry(rt, r.ValidateOnly)
		}
		if err != nil {
			st.ErrorCode, st.ErrorMessage = adminError(err, rt.Topic)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}

func (b *Broker) createPartitionsEntry(rt kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
	t := b.topic(rt.Topic)
	if t == nil {
		return newTopicError(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
	}
	have := int32(len(t.Partitions))
	switch {
	case rt.Count < have:
		return newTopicError(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, have, rt.Count)
	case rt.Count == have:
		return newTopicError(kerr.InvalidPartitions, "Topic already has %d partition(s).", have)
	case rt.Count > maxPartitionsCap:
		return newTopicError(kerr.InvalidPartitions, "Number of partitions %d exceeds the limit of %d.", rt.Count, maxPartitionsCap)
	}
	if rt.Assignment != nil {
		if int32(len(rt.Assignment)) != rt.Count-have {
			return newTopicError(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", rt.Count-have, len(rt.Assignment))
		}
		for _, a := range rt.Assignment {
			if len(a.Replicas) != 1 && len(a.Replicas) > 0 {
				return newTopicError(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have 1 replica(s).", len(a.Replicas))
			}
			if err := b.checkReplicas(a.Replicas); err != nil {
				return err
			}
		}
	}
	return b.createPartitions(rt.Topic, rt.Count, validateOnly)
}
