package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/acl"
)

// clusterResourceName is the one cluster resource's name in ACLs
// (Kafka's Resource.CLUSTER_NAME).
const clusterResourceName = "kafka-cluster"

// Authorization follows Kafka's AuthHelper: with no authorizer configured
// every request is allowed; otherwise the authorizer decides from the
// principal the connection authenticated as and the client's address.
// Requests the broker makes to itself (the controller on this broker
// reaching its own replica manager) carry the broker's authority.

// authorize reports whether the request's principal may perform op on
// the resource.
func (b *Broker) authorize(req *protocol.Request, op kmsg.ACLOperation, typ kmsg.ACLResourceType, name string) bool {
	if b.authorizer == nil || req.Conn == nil || req.Conn.Internal {
		return true
	}
	ok := b.authorizer.Authorize(req.Conn.Principal(), req.Conn.Host(), op, acl.Resource{Type: typ, Name: name})
	if !ok {
		b.logger.Debug("request not authorized", "principal", req.Conn.Principal(), "host", req.Conn.Host(),
			"operation", op.String(), "resource_type", typ.String(), "resource", name, "api_key", req.Key)
	}
	return ok
}

// authorizeCluster is authorize on the cluster resource.
func (b *Broker) authorizeCluster(req *protocol.Request, op kmsg.ACLOperation) bool {
	return b.authorize(req, op, kmsg.ACLResourceTypeCluster, clusterResourceName)
}

// authorizeByResourceType reports whether the principal may perform op
// on some resource of the type (KIP-679): how Kafka lets a producer with
// WRITE on any topic be idempotent without IDEMPOTENT_WRITE on the
// cluster.
func (b *Broker) authorizeByResourceType(req *protocol.Request, op kmsg.ACLOperation, typ kmsg.ACLResourceType) bool {
	if b.authorizer == nil || req.Conn == nil || req.Conn.Internal {
		return true
	}
	return b.authorizer.AuthorizeByResourceType(req.Conn.Principal(), req.Conn.Host(), op, typ)
}

// authorizedOperations is the bitfield Metadata, DescribeGroups and
// DescribeCluster report when asked: the operations of candidates the
// principal may perform on the resource. Without an authorizer every
// candidate is allowed.
func (b *Broker) authorizedOperations(req *protocol.Request, typ kmsg.ACLResourceType, name string, candidates []kmsg.ACLOperation) int32 {
	if b.authorizer == nil || req.Conn == nil || req.Conn.Internal {
		var bits int32
		for _, op := range candidates {
			bits |= 1 << uint(op)
		}
		return bits
	}
	return b.authorizer.AuthorizedOperations(req.Conn.Principal(), req.Conn.Host(), acl.Resource{Type: typ, Name: name}, candidates)
}

// authorizeCreateTopic is Kafka's rule for creating a topic: CREATE on
// the cluster, or on the topic itself.
func (b *Broker) authorizeCreateTopic(req *protocol.Request, topic string) bool {
	return b.authorizeCluster(req, kmsg.ACLOperationCreate) || b.authorize(req, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic, topic)
}

// The operations each resource type has, for the authorized-operations
// bitfields (Kafka's AclEntry.supportedOperations).
var (
	topicOperations = []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
		kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	groupOperations   = []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete}
	clusterOperations = []kmsg.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe}
)

// Kafka's default messages of the authorization errors (Errors.java);
// franz-go's kerr describes them in other words.
const (
	clusterAuthorizationFailedMessage = "Cluster authorization failed."
	topicAuthorizationFailedMessage   = "Topic authorization failed."
	groupAuthorizationFailedMessage   = "Group authorization failed."
	txnIDAuthorizationFailedMessage   = "Transactional Id authorization failed."
)

// kafkaErrorMessage is the message Kafka's Errors.message() gives code.
func kafkaErrorMessage(code int16) string {
	switch code {
	case kerr.ClusterAuthorizationFailed.Code:
		return clusterAuthorizationFailedMessage
	case kerr.TopicAuthorizationFailed.Code:
		return topicAuthorizationFailedMessage
	case kerr.GroupAuthorizationFailed.Code:
		return groupAuthorizationFailedMessage
	case kerr.TransactionalIDAuthorizationFailed.Code:
		return txnIDAuthorizationFailedMessage
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Description
	}
	return ""
}

// configResourceDenied checks op on a config resource: the cluster for
// broker and broker-logger resources, the topic for a topic (Kafka's
// handleDescribeConfigsRequest and handleAlterConfigsRequest).
func (b *Broker) configResourceDenied(req *protocol.Request, op kmsg.ACLOperation, typ kmsg.ConfigResourceType, name string) (code int16, msg *string, denied bool) {
	switch typ {
	case kmsg.ConfigResourceTypeTopic:
		if !b.authorize(req, op, kmsg.ACLResourceTypeTopic, name) {
			return kerr.TopicAuthorizationFailed.Code, nullableString(topicAuthorizationFailedMessage), true
		}
	case kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger:
		if !b.authorizeCluster(req, op) {
			return kerr.ClusterAuthorizationFailed.Code, nullableString(clusterAuthorizationFailedMessage), true
		}
	}
	return 0, nil, false
}
