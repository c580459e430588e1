package server

// FindCoordinator, versions 0-6 (v4+ batches several keys).
//
// Group keys map to a partition of __consumer_offsets; the coordinator is
// that partition's leader, which in standalone mode is always this broker.
// Transactions are not served yet (server/GAPS.md): transaction keys get
// COORDINATOR_NOT_AVAILABLE, which clients treat as retriable.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.FindCoordinator.Int16(), 0, 6, handleFindCoordinator) }

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
		case r.CoordinatorType != 0:
			c.ErrorCode = kerr.CoordinatorNotAvailable.Code
		case key == "" && req.Version < 4:
			c.ErrorCode = kerr.InvalidRequest.Code
		default:
			if err := b.ensureOffsetsTopic(); err != nil {
				b.logger.Warn("cannot create the offsets topic", "err", err)
				c.ErrorCode = kerr.CoordinatorNotAvailable.Code
				break
			}
			c.NodeID, c.Host, c.Port = b.coordinatorFor(key, req.Conn.Listener)
			if c.NodeID < 0 {
				c.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
		}
		if c.ErrorCode != 0 {
			msg := kerr.ErrorForCode(c.ErrorCode).Error()
			c.ErrorMessage = &msg
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if req.Version < 4 {
		c := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
		resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	return protocol.Response{Msg: resp}
}
