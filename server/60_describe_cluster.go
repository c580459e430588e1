package server

// DescribeCluster, versions 0-1.
//
// The cluster is this broker: it is the one broker listed and the
// controller. v1 asks for an endpoint type; a broker serves BROKER
// endpoints only and answers CONTROLLER requests with
// UNSUPPORTED_ENDPOINT_TYPE, as Kafka's brokers do.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

// endpointTypeBroker is DescribeCluster's EndpointType for brokers (1); 2
// means controllers.
const endpointTypeBroker = 1

func init() { register(kmsg.DescribeCluster.Int16(), 0, 1, handleDescribeCluster) }

func handleDescribeCluster(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeClusterRequest)
	resp := kmsg.NewPtrDescribeClusterResponse()
	resp.SetVersion(req.Version)
	resp.EndpointType = endpointTypeBroker
	if req.Version >= 1 && r.EndpointType != endpointTypeBroker {
		resp.EndpointType = r.EndpointType
		resp.ErrorCode = kerr.UnsupportedEndpointType.Code
		resp.ErrorMessage = nullableString("The broker only supports the BROKER endpoint type.")
		return protocol.Response{Msg: resp}
	}
	listener := ""
	if req.Conn != nil {
		listener = req.Conn.Listener
	}
	resp.Brokers = []kmsg.DescribeClusterResponseBroker{}
	for _, bi := range b.brokersFor(listener) {
		broker := kmsg.NewDescribeClusterResponseBroker()
		broker.NodeID, broker.Host, broker.Port, broker.Rack = bi.ID, bi.Host, bi.Port, bi.Rack
		resp.Brokers = append(resp.Brokers, broker)
	}
	resp.ClusterID = b.logs.ClusterID()
	resp.ControllerID = b.controllerID()
	if r.IncludeClusterAuthorizedOperations {
		// Kafka answers 0 to a principal that may not describe the
		// cluster.
		resp.ClusterAuthorizedOperations = 0
		if b.authorizeCluster(req, kmsg.ACLOperationDescribe) {
			resp.ClusterAuthorizedOperations = b.authorizedOperations(req, kmsg.ACLResourceTypeCluster, clusterResourceName, clusterOperations)
		}
	}
	return protocol.Response{Msg: resp}
}
