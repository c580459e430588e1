package server

// UpdateMetadata, versions 0-8. Sent by the controller to every live
// broker (cluster mode only); it replaces the live brokers and the listed
// partitions' states in the metadata cache, from which Metadata is
// answered. A standalone broker has no controller and refuses it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.UpdateMetadata.Int16(), 0, 8, handleUpdateMetadata) }

func handleUpdateMetadata(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.UpdateMetadataRequest)
	resp := r.ResponseKind().(*kmsg.UpdateMetadataResponse)
	// Only brokers send it: CLUSTER_ACTION on the cluster.
	if !b.authorizeCluster(req, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	unlock, code := b.lockForController(r.ControllerID, r.ControllerEpoch, r.BrokerEpoch)
	if code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	defer unlock()
	b.applyUpdateMetadata(r)
	return protocol.Response{Msg: resp}
}
