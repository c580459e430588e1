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
// With a transactional id the transaction coordinator (server/txn)
// answers: it bumps the id's epoch, fencing an older producer instance and
// aborting its open transaction, and persists the change to
// __transaction_state before answering.

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
	// Kafka: a transactional producer needs WRITE on its id; an
	// idempotent one IDEMPOTENT_WRITE on the cluster or, since KIP-679,
	// WRITE on any topic.
	switch {
	case r.TransactionalID != nil && !b.authorizeTxnID(req, *r.TransactionalID):
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	case r.TransactionalID == nil && !b.authorizeCluster(req, kmsg.ACLOperationIdempotentWrite) &&
		!b.authorizeByResourceType(req, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic):
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return protocol.Response{Msg: resp}
	}
	if r.TransactionalID != nil {
		return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
			return protocol.Response{Msg: b.txns.InitProducerID(ctx, r)}
		}}
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
