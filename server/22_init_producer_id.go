package server

// InitProducerId, versions 0-5.
//
// Without a transactional id (idempotent producers) every request gets a
// fresh producer id at epoch 0, also when it carries a producer id and
// epoch (KIP-360): that is what Kafka's TransactionCoordinator does for a
// null transactional id ("always blindly accept the request and return a
// new producerId"); the client bumps an idempotent producer's epoch
// itself. Ids come from blocks of 1000 reserved on disk (produce_ids.go),
// so they never repeat across restarts.
//
// With a transactional id: there is no transaction coordinator, so the
// answer is COORDINATOR_NOT_AVAILABLE, which is what Kafka answers while
// its transaction coordinator cannot be reached (see GAPS.md).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.InitProducerID.Int16(), 0, 5, handleInitProducerID) }

func handleInitProducerID(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.InitProducerIDRequest)
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.SetVersion(req.Version)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if r.TransactionalID != nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return protocol.Response{Msg: resp}
	}
	if b.data.producerIDs == nil {
		resp.ErrorCode = kerr.UnknownServerError.Code
		return protocol.Response{Msg: resp}
	}
	id, err := b.data.producerIDs.generate()
	if err != nil {
		b.logger.Error("allocating a producer id block", "err", err)
		resp.ErrorCode = kerr.UnknownServerError.Code
		return protocol.Response{Msg: resp}
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return protocol.Response{Msg: resp}
}
