package server

// Metadata, versions 0-12.
//
// This broker is the whole cluster: it is the only broker listed, the
// controller, and the leader, sole replica and ISR of every partition.
// Its address is the advertised endpoint of the listener the request came
// in on, so a client that bootstrapped through one listener stays on it.
//
// Topic selection follows the version rules: v0 lists every topic for an
// empty list; v1+ lists every topic for a null list and none for an empty
// one. v12 may name topics by id (unknown id: UNKNOWN_TOPIC_ID).
//
// Auto-creation (auto.create.topics.enable, and v4+ AllowAutoTopicCreation)
// creates a missing topic and, like Kafka, answers LEADER_NOT_AVAILABLE for
// it in this response; the client's retry sees it. A request for all
// topics never creates anything.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.Metadata.Int16(), 0, 12, handleMetadata) }

func handleMetadata(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.MetadataRequest)
	resp := kmsg.NewPtrMetadataResponse()
	resp.SetVersion(req.Version)

	listener := ""
	if req.Conn != nil {
		listener = req.Conn.Listener
	}
	resp.Brokers = []kmsg.MetadataResponseBroker{}
	for _, bi := range b.brokersFor(listener) {
		broker := kmsg.NewMetadataResponseBroker()
		broker.NodeID, broker.Host, broker.Port, broker.Rack = bi.ID, bi.Host, bi.Port, bi.Rack
		resp.Brokers = append(resp.Brokers, broker)
	}
	resp.ClusterID = nullableString(b.logs.ClusterID())
	resp.ControllerID = b.controllerID()
	if req.Version >= 8 && req.Version <= 10 && r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterAuthorizedOperations
	}

	allTopics := r.Topics == nil || (req.Version == 0 && len(r.Topics) == 0)
	if allTopics {
		for _, t := range b.sortedTopics() {
			resp.Topics = append(resp.Topics, b.metadataTopic(t))
		}
	} else {
		allowCreate := b.cfg.AutoCreateTopicsEnable && (req.Version < 4 || r.AllowAutoTopicCreation)
		seen := map[string]bool{}
		seenID := map[[16]byte]bool{}
		for _, rt := range r.Topics {
			if rt.Topic == nil {
				if seenID[rt.TopicID] {
					continue
				}
				seenID[rt.TopicID] = true
				resp.Topics = append(resp.Topics, b.metadataTopicByID(rt.TopicID))
				continue
			}
			if seen[*rt.Topic] {
				continue
			}
			seen[*rt.Topic] = true
			resp.Topics = append(resp.Topics, b.metadataTopicByName(*rt.Topic, allowCreate))
		}
	}
	if req.Version >= 8 {
		for i := range resp.Topics {
			if r.IncludeTopicAuthorizedOperations && resp.Topics[i].ErrorCode == 0 {
				resp.Topics[i].AuthorizedOperations = topicAuthorizedOperations
			}
		}
	}
	return protocol.Response{Msg: resp}
}

func (b *Broker) metadataTopicByID(id [16]byte) kmsg.MetadataResponseTopic {
	if t := b.topicByID(id); t != nil {
		return b.metadataTopic(t)
	}
	rt := kmsg.NewMetadataResponseTopic()
	rt.TopicID = id
	rt.ErrorCode = kerr.UnknownTopicID.Code
	rt.Partitions = []kmsg.MetadataResponseTopicPartition{}
	return rt
}

// metadataTopicByName describes a named topic, creating it first when
// allowed (AutoTopicCreationManager in Kafka).
func (b *Broker) metadataTopicByName(name string, allowCreate bool) kmsg.MetadataResponseTopic {
	if t := b.topic(name); t != nil {
		return b.metadataTopic(t)
	}
	rt := kmsg.NewMetadataResponseTopic()
	rt.Topic = nullableString(name)
	rt.IsInternal = isInternalTopic(name)
	rt.Partitions = []kmsg.MetadataResponseTopicPartition{}
	if topicNameProblem(name) != "" {
		rt.ErrorCode = kerr.InvalidTopicException.Code
		return rt
	}
	if !allowCreate {
		rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return rt
	}
	err := b.autoCreateTopic(name)
	switch {
	case err == nil, errCode(err) == kerr.TopicAlreadyExists.Code:
		// A concurrent request may have won the race; either way the
		// topic is new to this client, which retries like Kafka's would.
		rt.ErrorCode = kerr.LeaderNotAvailable.Code
	default:
		b.logger.Warn("auto-creating a topic failed", "topic", name, "err", err)
		code, _ := adminError(err, name)
		rt.ErrorCode = code
	}
	return rt
}
