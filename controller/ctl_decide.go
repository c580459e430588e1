package controller

import (
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Pure decisions. Each function here takes the controller context (read
// only) and what the executor read from ZooKeeper for the event, and
// returns what to do: the context updates, the state znodes to write (with
// the version each write is conditional on) and the requests to send. None
// of them reads ZooKeeper, a clock or a random source, or changes the
// context: the executors in the ctl_*.go event handlers do the reads, apply
// the writes, update the context and send the batch, so a decision can be
// tested by calling it.

// leadershipUpdate is one context update of a decision: the partition's
// cached state znode and its partition state.
type leadershipUpdate struct {
	tp    kafkazk.TopicPartition
	st    partitionLeadership
	state partitionState
}

// apply puts the updates into the context.
func (c *controllerContext) apply(updates []leadershipUpdate) {
	for _, u := range updates {
		c.leadership[u.tp] = u.st
		c.states[u.tp] = u.state
	}
}

// stateFromLeadership is a partition's state given its state znode:
// Online when its leader is a live replica, else Offline.
func stateFromLeadership(ctx *controllerContext, tp kafkazk.TopicPartition, st partitionLeadership) partitionState {
	if st.Leader != noLeader && ctx.replicaOnline(tp, st.Leader) {
		return partitionOnline
	}
	return partitionOffline
}

// brokerChange is a /brokers/ids child change sorted out: brokers gone
// (failures), new brokers (start-ups), and brokers registered again with
// a higher epoch (bounces: a failure followed by a start-up).
type brokerChange struct {
	newIDs, deadIDs, bounced []int32
}

func (b brokerChange) empty() bool { return len(b.newIDs)+len(b.deadIDs)+len(b.bounced) == 0 }

// gone is the brokers handled as failures, in the order they are handled.
func (b brokerChange) gone() []int32 { return append(slices.Clone(b.deadIDs), b.bounced...) }

// started is the brokers handled as start-ups, in the order they are handled.
func (b brokerChange) started() []int32 { return append(slices.Clone(b.newIDs), b.bounced...) }

// decideBrokerChange compares the live brokers the controller knows with
// the registrations read from /brokers/ids.
func decideBrokerChange(known, current map[int32]liveBroker) brokerChange {
	var d brokerChange
	for id, b := range current {
		old, ok := known[id]
		switch {
		case !ok:
			d.newIDs = append(d.newIDs, id)
		case b.Epoch > old.Epoch:
			d.bounced = append(d.bounced, id)
		}
	}
	for id := range known {
		if _, ok := current[id]; !ok {
			d.deadIDs = append(d.deadIDs, id)
		}
	}
	slices.Sort(d.newIDs)
	slices.Sort(d.deadIDs)
	slices.Sort(d.bounced)
	return d
}

// partitionsLosingLeader is the partitions, of topics not being deleted,
// whose leader is among dead: a broker failure takes them Offline before
// the offline election.
func partitionsLosingLeader(ctx *controllerContext, dead []int32) []kafkazk.TopicPartition {
	var out []kafkazk.TopicPartition
	for tp, st := range ctx.leadership {
		if slices.Contains(dead, st.Leader) && !ctx.topicsToDelete[tp.Topic] {
			out = append(out, tp)
		}
	}
	sortPartitions(out)
	return out
}

// isrChangedPartitions is the partitions named by the ISR change
// notifications read, that the controller knows, each once, sorted.
func isrChangedPartitions(ctx *controllerContext, notifications [][]kafkazk.TopicPartition) []kafkazk.TopicPartition {
	seen := map[kafkazk.TopicPartition]bool{}
	var tps []kafkazk.TopicPartition
	for _, list := range notifications {
		for _, tp := range list {
			if _, known := ctx.assignment(tp); known && !seen[tp] {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	sortPartitions(tps)
	return tps
}

// isrChangeDecision is what the controller does about ISR changes that
// leaders announced: cache the state znodes read, tell every live broker
// by UpdateMetadata (no LeaderAndIsr: the leaders already know) and carry
// on with the reassignments that may have been waiting for these ISRs.
type isrChangeDecision struct {
	updates  []leadershipUpdate
	requests *requestBatch // nil: nothing to send
	reassign []kafkazk.TopicPartition
}

// decideIsrChange decides for the partitions in tps (isrChangedPartitions)
// given the state znodes read for them; a partition missing from states
// had no readable state znode and is left alone. The batch's
// UpdateMetadata carries the context's states when it is built, so the
// executor applies the updates before sending it.
func decideIsrChange(ctx *controllerContext, tps []kafkazk.TopicPartition, states map[kafkazk.TopicPartition]partitionLeadership) isrChangeDecision {
	var d isrChangeDecision
	var refreshed []kafkazk.TopicPartition
	for _, tp := range tps {
		st, ok := states[tp]
		if !ok {
			continue
		}
		d.updates = append(d.updates, leadershipUpdate{tp: tp, st: st, state: stateFromLeadership(ctx, tp, st)})
		refreshed = append(refreshed, tp)
	}
	if len(refreshed) == 0 {
		return d
	}
	d.requests = newRequestBatch(ctx)
	d.requests.addUpdateMetadata(ctx.liveBrokerIDs(), refreshed)
	for _, tp := range refreshed {
		if a, _ := ctx.assignment(tp); a.isBeingReassigned() {
			d.reassign = append(d.reassign, tp)
		}
	}
	return d
}

// decisionInputs are the reads beyond the partition's state znode that a
// leadership decision may ask the executor for (decision.needUncleanConfig).
type decisionInputs struct {
	// uncleanEnabled is the topic's effective
	// unclean.leader.election.enable, once read.
	uncleanEnabled map[string]bool
}

// decideElection is one partition's leader election with the strategy
// kind, given its current state znode (Kafka's
// PartitionStateMachine.electLeaderForPartitions with Election.scala's
// strategies). adminUnclean is an UNCLEAN ElectLeaders: unclean election
// allowed whatever the topic says. An offline election with no live ISR
// member needs the topic's unclean setting: without it in in, the
// decision asks for it.
func decideElection(ctx *controllerContext, tp kafkazk.TopicPartition, cur partitionLeadership, kind electionKind, adminUnclean bool, in decisionInputs) decision {
	a, ok := ctx.assignment(tp)
	if !ok {
		return decision{err: kerr.UnknownTopicOrPartition}
	}
	l := ctx.liveness(tp)
	var res electionResult
	switch kind {
	case offlineElection:
		allow := adminUnclean
		if !allow && !hasLiveISRMember(cur.ISR, l) {
			enabled, read := in.uncleanEnabled[tp.Topic]
			if !read {
				return decision{needUncleanConfig: true}
			}
			allow = enabled
		}
		res = electOffline(a.Replicas, cur.leaderAndIsr, l, allow, false)
	case reassignElection:
		res = electReassign(a.targetReplicas(), cur.leaderAndIsr, l)
	case preferredElection:
		res = electPreferred(a.Replicas, cur.leaderAndIsr, l)
	case controlledShutdownElection:
		res = electControlledShutdown(a.Replicas, cur.leaderAndIsr, l)
	}
	if !res.Elected {
		return decision{err: errNoEligibleLeader}
	}
	return decision{change: true, next: res.New, recipients: res.Recipients, unclean: res.Unclean}
}

// decideIsrRemoval takes broker out of the partition's ISR
// (ReplicaStateMachine's removeReplicasFromIsr): the leader becomes -1 if
// broker led, the ISR keeps its last member, the leader epoch is bumped,
// and the partition's other replicas get the new state.
func decideIsrRemoval(ctx *controllerContext, tp kafkazk.TopicPartition, cur partitionLeadership, broker int32) decision {
	next, changed := removeFromIsr(cur.leaderAndIsr, broker)
	if !changed {
		return decision{}
	}
	a, _ := ctx.assignment(tp)
	recipients := slices.DeleteFunc(slices.Clone(a.Replicas), func(r int32) bool { return r == broker })
	return decision{change: true, next: next, recipients: recipients}
}

// partitionInit is a new partition's first state znode, to be created.
type partitionInit struct {
	tp         kafkazk.TopicPartition
	st         partitionLeadership
	assignment replicaAssignment
}

// decideNewPartitions is New → Online for partitions without a state
// znode: leader the first live replica, ISR the live replicas, leader
// epoch 0, decided at controllerEpoch (PartitionEpoch 0 is the version
// of the znode once created). A partition with no live replica stays New
// (noLiveReplica); one the context does not know is left out.
func decideNewPartitions(ctx *controllerContext, tps []kafkazk.TopicPartition, controllerEpoch int32) (inits []partitionInit, noLiveReplica []kafkazk.TopicPartition) {
	for _, tp := range tps {
		a, ok := ctx.assignment(tp)
		if !ok {
			continue
		}
		init, ok := initialLeaderAndIsr(a.Replicas, ctx.liveness(tp))
		if !ok {
			noLiveReplica = append(noLiveReplica, tp)
			continue
		}
		inits = append(inits, partitionInit{tp: tp, st: partitionLeadership{leaderAndIsr: init, ControllerEpoch: controllerEpoch}, assignment: a})
	}
	return inits, noLiveReplica
}

// brokerStartupDecision is what brokers that started get, before the
// elections that were waiting for them.
type brokerStartupDecision struct {
	// metadata is sent first: the live brokers to the brokers already
	// there, every partition's state to the new ones.
	metadata *requestBatch
	// replicas has a LeaderAndIsr for each replica the new brokers host;
	// the elections add to it.
	replicas *requestBatch
}

// decideBrokerStartup decides for brokers that started, already in the
// context's live brokers. The executor also forgets the replicas marked
// offline on them (clearOfflineReplicas).
func decideBrokerStartup(ctx *controllerContext, started []int32) brokerStartupDecision {
	var existing []int32
	for _, id := range ctx.liveBrokerIDs() {
		if !slices.Contains(started, id) {
			existing = append(existing, id)
		}
	}
	d := brokerStartupDecision{metadata: newRequestBatch(ctx), replicas: newRequestBatch(ctx)}
	d.metadata.addUpdateMetadata(existing, nil)
	d.metadata.addUpdateMetadata(started, ctx.allPartitions())
	for _, id := range started {
		addReplicasOnline(ctx, d.replicas, id, ctx.partitionsOnBroker(id))
	}
	return d
}
