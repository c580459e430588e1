package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Preferred and unclean elections on request (ElectLeaders) and the
// automatic leader rebalance, decided; ctl_rebalance.go executes them.

// electLeadersDecision is an ElectLeaders request sorted out: the
// partitions answered without an election, and the candidates to elect
// with kind.
type electLeadersDecision struct {
	results      map[kafkazk.TopicPartition]error
	candidates   []kafkazk.TopicPartition
	kind         electionKind
	adminUnclean bool
}

// decideElectLeaders sorts out an ElectLeaders of typ for partitions (nil:
// every partition): unknown partitions, topics being deleted and
// partitions whose election is not needed are answered; the others are
// candidates for the preferred election, or the offline one with unclean
// election allowed.
func decideElectLeaders(ctx *controllerContext, typ ElectionType, partitions []kafkazk.TopicPartition) electLeadersDecision {
	d := electLeadersDecision{results: map[kafkazk.TopicPartition]error{}, kind: preferredElection}
	if typ == ElectUnclean {
		d.kind, d.adminUnclean = offlineElection, true
	}
	tps := partitions
	if partitions == nil {
		tps = ctx.allPartitions()
	}
	for _, tp := range tps {
		a, ok := ctx.assignment(tp)
		st, hasState := ctx.leadership[tp]
		switch {
		case !ok || !hasState:
			d.results[tp] = kerr.UnknownTopicOrPartition
		case ctx.topicsToDelete[tp.Topic]:
			d.results[tp] = &kafkazk.KafkaError{Code: kerr.InvalidTopicException, Message: "The topic is being deleted."}
		case typ == ElectPreferred && len(a.Replicas) > 0 && st.Leader == a.Replicas[0]:
			d.results[tp] = kerr.ElectionNotNeeded
		case typ == ElectUnclean && st.Leader != noLeader && ctx.replicaOnline(tp, st.Leader):
			d.results[tp] = kerr.ElectionNotNeeded
		default:
			d.candidates = append(d.candidates, tp)
		}
	}
	return d
}

// electLeadersResults puts each candidate's outcome into d.results, given
// the elections' failures, with the codes Kafka reports.
func electLeadersResults(typ ElectionType, d electLeadersDecision, failed map[kafkazk.TopicPartition]error) {
	for _, tp := range d.candidates {
		switch e := failed[tp]; {
		case e == nil:
			d.results[tp] = nil
		case e == errNoEligibleLeader && typ == ElectPreferred:
			d.results[tp] = &kafkazk.KafkaError{Code: kerr.PreferredLeaderNotAvailable, Message: "Failed to elect leader for partition " + tp.Topic + " under strategy PreferredReplicaPartitionLeaderElectionStrategy"}
		case e == errNoEligibleLeader:
			d.results[tp] = &kafkazk.KafkaError{Code: kerr.EligibleLeadersNotAvailable, Message: "Failed to elect leader for partition " + tp.Topic + " under strategy OfflinePartitionLeaderElectionStrategy(true)"}
		default:
			d.results[tp] = &kafkazk.KafkaError{Code: kerr.UnknownServerError, Message: e.Error()}
		}
	}
}

// decideAutoRebalance is the leader.imbalance check: nothing when
// auto.leader.rebalance.enable is off or, as in Kafka, while any
// reassignment runs; else the partitions of preferredImbalance.
func decideAutoRebalance(ctx *controllerContext, enabled bool, pct int) []kafkazk.TopicPartition {
	if !enabled {
		return nil
	}
	for _, tp := range ctx.allPartitions() {
		if a, _ := ctx.assignment(tp); a.isBeingReassigned() {
			return nil
		}
	}
	return preferredImbalance(ctx, pct)
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
