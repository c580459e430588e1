package server

import (
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
