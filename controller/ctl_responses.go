package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// handleResponse is Kafka's handling of controller request responses, on
// the event loop.
func (c *Controller) handleResponse(broker int32, req kmsg.Request, resp kmsg.Response) error {
	switch r := resp.(type) {
	case *kmsg.LeaderAndISRResponse:
		return c.handleLeaderAndIsrResponse(broker, r)
	case *kmsg.StopReplicaResponse:
		sr, _ := req.(*kmsg.StopReplicaRequest)
		if sr == nil {
			return nil
		}
		return c.handleStopReplicaResponse(broker, sr, r)
	case *kmsg.UpdateMetadataResponse:
		if r.ErrorCode != 0 {
			c.log.Warn("UpdateMetadata failed", "broker", broker, "err", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	return nil
}

// handleLeaderAndIsrResponse: a replica answering KAFKA_STORAGE_ERROR sits
// on a failed log directory; it is offline, and if it led, the partition
// needs a new leader. Other per-partition errors (notably
// STALE_CONTROLLER_EPOCH for a state the broker already has) are normal.
func (c *Controller) handleLeaderAndIsrResponse(broker int32, r *kmsg.LeaderAndISRResponse) error {
	failed, err := storageErrorPartitions(c.ctx, r)
	if err != nil {
		c.log.Warn("LeaderAndIsr failed", "broker", broker, "err", err)
		return nil
	}
	if len(failed) == 0 {
		return nil
	}
	c.log.Warn("replicas on a failed log directory", "broker", broker, "partitions", failed)
	b := newRequestBatch(c.ctx)
	for _, tp := range failed {
		if _, ok := c.ctx.assignment(tp); !ok {
			continue
		}
		m := c.ctx.offlineReplicas[tp]
		if m == nil {
			m = map[int32]bool{}
			c.ctx.offlineReplicas[tp] = m
		}
		m[broker] = true
		c.refreshPartitionState(tp)
	}
	if err := c.triggerOnlinePartitionStateChange(b); err != nil {
		return err
	}
	if err := c.removeReplicaFromIsr(b, broker, failed); err != nil {
		return err
	}
	c.sendBatch(b)
	return nil
}
