package server

// FindCoordinator, versions 0-6 (v4+ batches several keys).
//
// Group keys map to a partition of __consumer_offsets, transactional ids
// to one of __transaction_state; the coordinator is that partition's
// leader, on the listener the client came in on. The topic is created on
// the first lookup, as Kafka does.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.FindCoordinator.Int16(), 0, 6, handleFindCoordinator) }

// Kafka's CoordinatorType ids (share groups, 2, are not served).
const (
	coordinatorGroup       int8 = 0
	coordinatorTransaction int8 = 1
)

func handleFindCoordinator(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.FindCoordinatorRequest)
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := r.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{r.CoordinatorKey}
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		c.NodeID, c.Host, c.Port = -1, "", -1
		switch {
		case r.CoordinatorType != coordinatorGroup && r.CoordinatorType != coordinatorTransaction:
			c.ErrorCode = kerr.InvalidRequest.Code
		case key == "" && req.Version < 4:
			c.ErrorCode = kerr.InvalidRequest.Code
		case r.CoordinatorType == coordinatorGroup && !b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, key):
			c.ErrorCode = kerr.GroupAuthorizationFailed.Code
		case r.CoordinatorType == coordinatorTransaction && !b.authorize(req, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, key):
			c.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		case r.CoordinatorType == coordinatorGroup:
			if err := b.ensureOffsetsTopic(); err != nil {
				b.logger.Warn("cannot create the offsets topic", "err", err)
				c.ErrorCode = kerr.CoordinatorNotAvailable.Code
				break
			}
			c.NodeID, c.Host, c.Port = b.coordinatorFor(key, req.Conn.Listener)
		default:
			if err := b.ensureTxnTopic(); err != nil {
				b.logger.Warn("cannot create the transaction state topic", "err", err)
				c.ErrorCode = kerr.CoordinatorNotAvailable.Code
				break
			}
			c.NodeID, c.Host, c.Port = b.txnCoordinatorFor(key, req.Conn.Listener)
		}
		if c.ErrorCode == 0 && c.NodeID < 0 {
			c.ErrorCode = kerr.CoordinatorNotAvailable.Code
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if req.Version < 4 {
		// Only the old form carries a message: the error's own
		// (FindCoordinatorResponse.prepareOldResponse); v4+ coordinators
		// have none in Kafka's answer.
		c := resp.Coordinators[0]
		resp.ErrorCode = c.ErrorCode
		if c.ErrorCode != 0 {
			resp.ErrorMessage = nullableString(kafkaErrorMessage(c.ErrorCode))
		}
		resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	return protocol.Response{Msg: resp}
}
