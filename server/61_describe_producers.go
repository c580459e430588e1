package server

// DescribeProducers, version 0: the idempotent and transactional
// producers a partition tracks (kafka-transactions describe-producers):
// CoordinatorEpoch is that of the coordinator that wrote the producer's
// last transaction marker (-1 before any), CurrentTxnStartOffset the first
// offset of its ongoing transaction (-1 when none), as Kafka's
// UnifiedLog.activeProducers reports them.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeProducers.Int16(), 0, 0, handleDescribeProducers) }

func handleDescribeProducers(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeProducersRequest)
	resp := kmsg.NewPtrDescribeProducersResponse()
	resp.SetVersion(req.Version)
	for _, rt := range r.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		t := b.topic(rt.Topic)
		// Kafka's handleDescribeProducersRequest: the name's validity
		// first, then READ on the topic (answered with the error's own
		// message).
		var topicErr *kerr.Error
		var topicMsg *string
		if problem := topicNameProblem(rt.Topic); problem != "" {
			topicErr, topicMsg = kerr.InvalidTopicException, nullableString(problem)
		} else if !b.topicAllowed(req, kmsg.ACLOperationRead, rt.Topic) {
			topicErr, topicMsg = kerr.TopicAuthorizationFailed, nullableString(topicAuthorizationFailedMessage)
		}
		for _, pi := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = pi
			if topicErr != nil {
				sp.ErrorCode, sp.ErrorMessage = topicErr.Code, topicMsg
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p, perr := b.leaderPartition(t, pi)
			if perr != nil {
				sp.ErrorCode = errCode(perr)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			for _, pr := range p.Log().ActiveProducers() {
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID = pr.ID
				ap.ProducerEpoch = int32(pr.Epoch)
				ap.LastSequence = pr.LastSeq()
				ap.LastTimestamp = pr.LastTimestamp
				ap.CoordinatorEpoch = pr.CoordinatorEpoch
				ap.CurrentTxnStartOffset = pr.CurrentTxnFirstOffset
				sp.ActiveProducers = append(sp.ActiveProducers, ap)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}
