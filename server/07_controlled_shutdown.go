package server

// ControlledShutdown, versions 0-3. A broker about to stop asks the
// controller to move leadership off it first (controlled.shutdown.enable);
// the answer lists the partitions it still leads, and the broker retries
// until none is left or its retries run out. Only the controller serves it:
// other brokers answer NOT_CONTROLLER, a standalone broker refuses it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.ControlledShutdown.Int16(), 0, 3, handleControlledShutdown) }

func handleControlledShutdown(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.ControlledShutdownRequest)
	resp := r.ResponseKind().(*kmsg.ControlledShutdownResponse)
	if code := b.controllerRequestRefusal(req); code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	epoch := r.BrokerEpoch
	if req.Version < 2 {
		epoch = -1
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		remaining, err := b.cluster.control.ControlledShutdown(ctx, r.BrokerID, epoch)
		resp.ErrorCode = errCode(err)
		for _, tp := range remaining {
			pr := kmsg.NewControlledShutdownResponsePartitionsRemaining()
			pr.Topic, pr.Partition = tp.Topic, tp.Partition
			resp.PartitionsRemaining = append(resp.PartitionsRemaining, pr)
		}
		return protocol.Response{Msg: resp}
	}}
}
