package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// controlledShutdownDecision is what ControlledShutdown does for a broker
// (KafkaController.doControlledShutdown), decided from the context alone.
// The executor marks the broker shutting down (so the elections skip it),
// elects new leaders for led, takes the broker out of the ISRs of
// followed, and sends requests together with what those two add.
type controlledShutdownDecision struct {
	// err refuses the request: the broker is unknown, or its epoch stale.
	err error
	// led is the partitions the broker leads, for the controlled-shutdown
	// election.
	led []kafkazk.TopicPartition
	// followed is the partitions it follows, to leave the ISR of.
	followed []kafkazk.TopicPartition
	// requests has a StopReplica (no delete) to the broker for each
	// followed partition, at the leader epoch cached before it leaves the
	// ISR.
	requests *requestBatch
}

// decideControlledShutdown decides for broker id asking to shut down with
// brokerEpoch. Single-replica partitions and topics being deleted are left
// alone: there is no one to hand them to.
func decideControlledShutdown(ctx *controllerContext, id int32, brokerEpoch int64) controlledShutdownDecision {
	b, ok := ctx.brokers[id]
	if !ok {
		return controlledShutdownDecision{err: kerr.BrokerNotAvailable}
	}
	// -1 is "unknown", never stale (AbstractControlRequest.UNKNOWN_BROKER_EPOCH).
	if brokerEpoch != -1 && brokerEpoch < b.Epoch {
		return controlledShutdownDecision{err: kerr.StaleBrokerEpoch}
	}
	d := controlledShutdownDecision{requests: newRequestBatch(ctx)}
	for _, tp := range ctx.partitionsOnBroker(id) {
		a, _ := ctx.assignment(tp)
		st, has := ctx.leadership[tp]
		if len(a.Replicas) <= 1 || !has || ctx.topicsToDelete[tp.Topic] {
			continue
		}
		if st.Leader == id {
			d.led = append(d.led, tp)
		} else {
			d.followed = append(d.followed, tp)
		}
	}
	addStopReplicas(ctx, d.requests, id, d.followed)
	return d
}

// addStopReplicas queues the StopReplica (no delete) of replicasOffline,
// at each partition's cached leader epoch (-1 without one).
func addStopReplicas(ctx *controllerContext, b *requestBatch, broker int32, tps []kafkazk.TopicPartition) {
	for _, tp := range tps {
		epoch := int32(-1)
		if st, ok := ctx.leadership[tp]; ok {
			epoch = st.LeaderEpoch
		}
		b.addStopReplica([]int32{broker}, tp, false, epoch)
	}
}

// controlledShutdownRemaining is the partitions, of more than one
// replica, that broker id still leads once the decision is executed: the
// broker retries its ControlledShutdown until there are none.
func controlledShutdownRemaining(ctx *controllerContext, id int32) []kafkazk.TopicPartition {
	remaining := []kafkazk.TopicPartition{}
	for _, tp := range ctx.partitionsOnBroker(id) {
		a, _ := ctx.assignment(tp)
		if st, ok := ctx.leadership[tp]; ok && len(a.Replicas) > 1 && st.Leader == id {
			remaining = append(remaining, tp)
		}
	}
	return remaining
}
