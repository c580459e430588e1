package server

// AllocateProducerIds, version 0 (KIP-730). From
// inter.broker.protocol.version 3.0-IV0 a Kafka broker asks the controller
// for each block of producer ids instead of writing
// /latest_producer_id_block itself; a kbroker controller claims the block
// in the asking broker's name (zkbroker, AllocateProducerIDs). Without it,
// a Kafka broker under a kbroker controller could not answer
// InitProducerId, and idempotent producers bootstrapped there would fail.
// Only the controller serves it: other brokers answer NOT_CONTROLLER.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AllocateProducerIDs.Int16(), 0, 0, handleAllocateProducerIDs) }

func handleAllocateProducerIDs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AllocateProducerIDsRequest)
	resp := r.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	if code := b.controllerRequestRefusal(req); code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		start, end, err := b.cluster.control.AllocateProducerIDs(ctx, r.BrokerID, r.BrokerEpoch)
		if err != nil {
			resp.ErrorCode = errCode(err)
			return protocol.Response{Msg: resp}
		}
		resp.ProducerIDStart, resp.ProducerIDLen = start, int32(end-start)
		return protocol.Response{Msg: resp}
	}}
}
