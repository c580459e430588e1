package server

// Metadata, versions 0-12.
//
// The answer comes from the metadata cache: in cluster mode what the
// controller's UpdateMetadata requests said (live brokers, every
// partition's leader, epochs, replicas and ISR), for a standalone broker
// its own state (it is the only broker, the controller, and the leader,
// sole replica and ISR of every partition). Brokers are listed with their
// endpoint on the listener the request came in on, so a client that
// bootstrapped through one listener stays on it. Before its first
// UpdateMetadata a broker of a cluster knows no topic yet, and a named one
// is LEADER_NOT_AVAILABLE rather than unknown (awaitingMetadata).
//
// Topic selection follows the version rules: v0 lists every topic for an
// empty list; v1+ lists every topic for a null list and none for an empty
// one. v12 may name topics by id (unknown id: UNKNOWN_TOPIC_ID).
//
// Auto-creation (auto.create.topics.enable, and v4+ AllowAutoTopicCreation)
// creates a missing topic and, like Kafka, answers LEADER_NOT_AVAILABLE for
// it in this response; the client's retry sees it. A request for all
// topics never creates anything.
//
// Authorization (Kafka's KafkaApis.handleTopicMetadataRequest): a topic
// the principal may not DESCRIBE is left out of an all-topics answer and
// answered TOPIC_AUTHORIZATION_FAILED when named (by id: without its
// name); auto-creation needs CREATE on the cluster or the topic.

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
		resp.AuthorizedOperations = 0
		if b.authorizeCluster(req, kmsg.ACLOperationDescribe) {
			resp.AuthorizedOperations = b.authorizedOperations(req, kmsg.ACLResourceTypeCluster, clusterResourceName, clusterOperations)
		}
	}

	describable := func(name string) bool {
		return b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name)
	}
	allTopics := r.Topics == nil || (req.Version == 0 && len(r.Topics) == 0)
	if allTopics {
		for _, t := range b.sortedTopics() {
			if describable(t.Name) {
				resp.Topics = append(resp.Topics, b.metadataTopic(t))
			}
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
				mt := b.metadataTopicByID(rt.TopicID)
				if mt.Topic != nil && !describable(*mt.Topic) {
					mt = unauthorizedMetadataTopic(nil, rt.TopicID, false)
				}
				resp.Topics = append(resp.Topics, mt)
				continue
			}
			if seen[*rt.Topic] {
				continue
			}
			seen[*rt.Topic] = true
			if !describable(*rt.Topic) {
				// Not even whether it is an internal topic.
				resp.Topics = append(resp.Topics, unauthorizedMetadataTopic(rt.Topic, [16]byte{}, false))
				continue
			}
			create := allowCreate && b.topic(*rt.Topic) == nil
			if create && !b.authorizeCreateTopic(req, *rt.Topic) {
				resp.Topics = append(resp.Topics, unauthorizedMetadataTopic(rt.Topic, [16]byte{}, isInternalTopic(*rt.Topic)))
				continue
			}
			resp.Topics = append(resp.Topics, b.metadataTopicByName(*rt.Topic, allowCreate))
		}
	}
	if req.Version >= 8 && r.IncludeTopicAuthorizedOperations {
		// Every topic the principal may describe, also one answered with
		// an error (unknown, just auto-created), as Kafka's
		// setTopicAuthorizedOperations; denied ones keep the default.
		for i := range resp.Topics {
			if t := resp.Topics[i]; t.Topic != nil && t.ErrorCode != kerr.TopicAuthorizationFailed.Code {
				resp.Topics[i].AuthorizedOperations = b.authorizedOperations(req, kmsg.ACLResourceTypeTopic, *t.Topic, topicOperations)
			}
		}
	}
	return protocol.Response{Msg: resp}
}

// unauthorizedMetadataTopic answers a topic the principal may not see;
// one asked for by id keeps its name to itself. Kafka says whether it is
// internal only to a principal that may describe it but not create it.
func unauthorizedMetadataTopic(name *string, id [16]byte, internal bool) kmsg.MetadataResponseTopic {
	rt := kmsg.NewMetadataResponseTopic()
	rt.Topic, rt.TopicID = name, id
	rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
	rt.Partitions = []kmsg.MetadataResponseTopicPartition{}
	rt.IsInternal = internal
	return rt
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
		if b.cluster.awaitingMetadata() {
			// Retriable, and no client counts it as an unknown topic.
			rt.ErrorCode = kerr.LeaderNotAvailable.Code
		}
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
