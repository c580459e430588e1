package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ElectionType is ElectLeaders' election type (KIP-460).
type ElectionType int8

const (
	ElectPreferred ElectionType = 0
	ElectUnclean   ElectionType = 1
)

// electLeadersAPI is ElectLeaders on the controller
// (KafkaController.processReplicaLeaderElection). partitions nil means every
// partition. Each partition's result is nil (elected) or a kerr error /
// *kafkazk.KafkaError.
func (c *Controller) electLeadersAPI(typ ElectionType, partitions []kafkazk.TopicPartition) (map[kafkazk.TopicPartition]error, error) {
	results := map[kafkazk.TopicPartition]error{}
	var tps []kafkazk.TopicPartition
	if partitions == nil {
		tps = c.ctx.allPartitions()
	} else {
		for _, p := range partitions {
			tps = append(tps, kafkazk.TopicPartition(p))
		}
	}
	var candidates []kafkazk.TopicPartition
	for _, tp := range tps {
		key := kafkazk.TopicPartition(tp)
		a, ok := c.ctx.assignment(tp)
		st, hasState := c.ctx.leadership[tp]
		switch {
		case !ok || !hasState:
			results[key] = kerr.UnknownTopicOrPartition
		case c.ctx.topicsToDelete[tp.Topic]:
			results[key] = &kafkazk.KafkaError{Code: kerr.InvalidTopicException, Message: "The topic is being deleted."}
		case typ == ElectPreferred && len(a.Replicas) > 0 && st.Leader == a.Replicas[0]:
			results[key] = kerr.ElectionNotNeeded
		case typ == ElectUnclean && st.Leader != noLeader && c.ctx.replicaOnline(tp, st.Leader):
			results[key] = kerr.ElectionNotNeeded
		default:
			candidates = append(candidates, tp)
		}
	}
	b := newRequestBatch(c.ctx)
	kind := preferredElection
	if typ == ElectUnclean {
		kind = offlineElection
	}
	failed, err := c.electLeaders(b, candidates, kind, typ == ElectUnclean)
	c.sendBatch(b)
	if err != nil {
		return nil, err
	}
	for _, tp := range candidates {
		key := kafkazk.TopicPartition(tp)
		switch e := failed[tp]; {
		case e == nil:
			results[key] = nil
		case e == errNoEligibleLeader && typ == ElectPreferred:
			results[key] = &kafkazk.KafkaError{Code: kerr.PreferredLeaderNotAvailable, Message: "Failed to elect leader for partition " + tp.Topic + " under strategy PreferredReplicaPartitionLeaderElectionStrategy"}
		case e == errNoEligibleLeader:
			results[key] = &kafkazk.KafkaError{Code: kerr.EligibleLeadersNotAvailable, Message: "Failed to elect leader for partition " + tp.Topic + " under strategy OfflinePartitionLeaderElectionStrategy(true)"}
		default:
			results[key] = &kafkazk.KafkaError{Code: kerr.UnknownServerError, Message: e.Error()}
		}
	}
	return results, nil
}

// preferredImbalance is the auto-rebalance decision
// (KafkaController.checkAndTriggerAutoLeaderRebalance), a pure function: for
// each broker, of the partitions whose preferred replica (AR[0]) it is, the
// share it does not lead; where that share exceeds pct percent, the
// partitions whose preferred replica is live, not shutting down and in the
// ISR are returned for a preferred election.
func preferredImbalance(ctx *controllerContext, pct int) []kafkazk.TopicPartition {
	byPreferred := map[int32][]kafkazk.TopicPartition{}
	for _, tp := range ctx.allPartitions() {
		a, _ := ctx.assignment(tp)
		if len(a.Replicas) == 0 || a.isBeingReassigned() || ctx.topicsToDelete[tp.Topic] {
			continue
		}
		byPreferred[a.Replicas[0]] = append(byPreferred[a.Replicas[0]], tp)
	}
	var out []kafkazk.TopicPartition
	for broker, tps := range byPreferred {
		var notLed []kafkazk.TopicPartition
		for _, tp := range tps {
			if st, ok := ctx.leadership[tp]; ok && st.Leader != broker {
				notLed = append(notLed, tp)
			}
		}
		if len(notLed)*100 <= pct*len(tps) {
			continue
		}
		for _, tp := range notLed {
			st := ctx.leadership[tp]
			if ctx.isLive(broker) && !ctx.shuttingDown[broker] && slices.Contains(st.ISR, broker) {
				out = append(out, tp)
			}
		}
	}
	sortPartitions(out)
	return out
}

// processAutoPreferredReplicaLeaderElection is the leader.imbalance check,
// run on a tick event. Like Kafka it waits while any reassignment runs.
func (c *Controller) processAutoPreferredReplicaLeaderElection() error {
	if !c.cfg.AutoLeaderRebalance {
		return nil
	}
	for _, tp := range c.ctx.allPartitions() {
		if a, _ := c.ctx.assignment(tp); a.isBeingReassigned() {
			return nil
		}
	}
	tps := preferredImbalance(c.ctx, c.cfg.ImbalancePerBrokerPct)
	if len(tps) == 0 {
		return nil
	}
	c.log.Info("leader imbalance: preferred replica election", "partitions", len(tps))
	b := newRequestBatch(c.ctx)
	_, err := c.electLeaders(b, tps, preferredElection, false)
	c.sendBatch(b)
	return err
}
