package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
)

// logDirEvent is one /log_dir_event_notification node as read.
type logDirEvent struct {
	node  string
	event kafkazk.LogDirEventZNode
}

// logDirDecision is what log-dir event notifications call for.
type logDirDecision struct {
	// ignored is the nodes naming an event other than a log directory
	// failure.
	ignored []string
	// brokers is the live brokers that reported a failure, each once,
	// sorted.
	brokers []int32
	// requests has, for each of them, a LeaderAndIsr of every replica it
	// hosts: the replicas in the failed directory answer
	// KAFKA_STORAGE_ERROR and the response handler takes them offline.
	requests *requestBatch
}

// decideLogDirEvents decides for the notifications read. A broker that is
// not live has nothing to be told.
func decideLogDirEvents(ctx *controllerContext, events []logDirEvent) logDirDecision {
	d := logDirDecision{requests: newRequestBatch(ctx)}
	for _, e := range events {
		if e.event.Event != kafkazk.LogDirFailureEvent {
			d.ignored = append(d.ignored, e.node)
			continue
		}
		if ctx.isLive(e.event.Broker) && !slices.Contains(d.brokers, e.event.Broker) {
			d.brokers = append(d.brokers, e.event.Broker)
		}
	}
	slices.Sort(d.brokers)
	for _, id := range d.brokers {
		addReplicasOnline(ctx, d.requests, id, ctx.partitionsOnBroker(id))
	}
	return d
}
