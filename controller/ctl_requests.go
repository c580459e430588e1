package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/metadataversion"
)

// leaderDuringDelete is the leader UpdateMetadata carries for a topic
// being deleted (LeaderAndIsr.LeaderDuringDelete): brokers drop it from
// their metadata cache.
const leaderDuringDelete int32 = -2

// leaderEpochDuringDelete is StopReplica's leader epoch for a deletion.
const leaderEpochDuringDelete int32 = -2

type laiEntry struct {
	state      partitionLeadership
	assignment replicaAssignment
	isNew      bool
}

type stopReplicaEntry struct {
	delete      bool
	leaderEpoch int32
}

// requestBatch is Kafka's ControllerBrokerRequestBatch: one decision's
// requests, collected per broker and sent as LeaderAndIsr, then
// UpdateMetadata, then StopReplica. Requests for brokers that are not live
// are dropped when added, as Kafka does.
type requestBatch struct {
	ctx *controllerContext
	lai map[int32]map[kafkazk.TopicPartition]laiEntry
	// um has an entry, possibly empty, for every broker due an
	// UpdateMetadata: an empty one carries the live brokers only.
	um   map[int32]map[kafkazk.TopicPartition]bool
	stop map[int32]map[kafkazk.TopicPartition]stopReplicaEntry
}

func newRequestBatch(ctx *controllerContext) *requestBatch {
	return &requestBatch{
		ctx:  ctx,
		lai:  map[int32]map[kafkazk.TopicPartition]laiEntry{},
		um:   map[int32]map[kafkazk.TopicPartition]bool{},
		stop: map[int32]map[kafkazk.TopicPartition]stopReplicaEntry{},
	}
}

// brokerEntries returns broker id's partitions in m, made on first use.
func brokerEntries[V any](m map[int32]map[kafkazk.TopicPartition]V, id int32) map[kafkazk.TopicPartition]V {
	e := m[id]
	if e == nil {
		e = map[kafkazk.TopicPartition]V{}
		m[id] = e
	}
	return e
}

// addLeaderAndIsr queues the partition's state for brokers, and, as every
// LeaderAndIsr does in Kafka, an UpdateMetadata of it to all live brokers.
func (b *requestBatch) addLeaderAndIsr(brokers []int32, tp kafkazk.TopicPartition, st partitionLeadership, a replicaAssignment, isNew bool) {
	for _, id := range brokers {
		if !b.ctx.isLive(id) {
			continue
		}
		m := brokerEntries(b.lai, id)
		// A new partition stays new if queued twice in one batch.
		if old, ok := m[tp]; ok && old.isNew {
			isNew = true
		}
		m[tp] = laiEntry{state: st, assignment: a, isNew: isNew}
	}
	b.addUpdateMetadata(b.ctx.liveBrokerIDs(), []kafkazk.TopicPartition{tp})
}

// addUpdateMetadata queues UpdateMetadata for brokers carrying the live
// brokers and the given partitions' current states (none: brokers only).
func (b *requestBatch) addUpdateMetadata(brokers []int32, partitions []kafkazk.TopicPartition) {
	for _, id := range brokers {
		if !b.ctx.isLive(id) {
			continue
		}
		m := brokerEntries(b.um, id)
		for _, tp := range partitions {
			m[tp] = true
		}
	}
}

func (b *requestBatch) addStopReplica(brokers []int32, tp kafkazk.TopicPartition, deletePartition bool, leaderEpoch int32) {
	for _, id := range brokers {
		if !b.ctx.isLive(id) {
			continue
		}
		m := brokerEntries(b.stop, id)
		// A delete already queued wins over a plain stop.
		if old, ok := m[tp]; ok && old.delete {
			deletePartition = true
		}
		m[tp] = stopReplicaEntry{delete: deletePartition, leaderEpoch: leaderEpoch}
	}
}

// controllerIdentity is what every controller request carries, and the
// inter.broker.protocol.version that decides the requests' versions (the
// zero value: metadataversion.Latest).
type controllerIdentity struct {
	ID    int32
	Epoch int32
	IBP   metadataversion.Version
}

func (ci controllerIdentity) ibp() metadataversion.Version { return ci.IBP.OrLatest() }

// outgoing is one request for one broker, in send order.
type outgoing struct {
	broker int32
	req    kmsg.Request
}

// build turns the batch into requests: per broker, LeaderAndIsr then
// UpdateMetadata then StopReplica, brokers in id order.
func (b *requestBatch) build(ci controllerIdentity, interBrokerListener string) []outgoing {
	var out []outgoing
	for _, id := range b.ctx.liveBrokerIDs() {
		if m := b.lai[id]; len(m) > 0 {
			out = append(out, outgoing{id, b.leaderAndIsrRequest(ci, id, m, interBrokerListener)})
		}
	}
	for _, id := range b.ctx.liveBrokerIDs() {
		if m, ok := b.um[id]; ok {
			out = append(out, outgoing{id, b.updateMetadataRequest(ci, id, m)})
		}
	}
	for _, id := range b.ctx.liveBrokerIDs() {
		if m := b.stop[id]; len(m) > 0 {
			for _, req := range fitStopReplica(b.stopReplicaRequest(ci, id, m)) {
				out = append(out, outgoing{id, req})
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[kafkazk.TopicPartition]V) []kafkazk.TopicPartition {
	tps := make([]kafkazk.TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	sortPartitions(tps)
	return tps
}

func orEmpty(rs []int32) []int32 {
	if rs == nil {
		return []int32{}
	}
	return slices.Clone(rs)
}

func (b *requestBatch) leaderAndIsrRequest(ci controllerIdentity, broker int32, m map[kafkazk.TopicPartition]laiEntry, listener string) *kmsg.LeaderAndISRRequest {
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version = ci.ibp().LeaderAndIsrVersion()
	req.ControllerID = ci.ID
	req.ControllerEpoch = ci.Epoch
	req.BrokerEpoch = b.ctx.brokers[broker].Epoch
	leaders := map[int32]bool{}
	for _, tp := range sortedKeys(m) {
		e := m[tp]
		if n := len(req.TopicStates); n == 0 || req.TopicStates[n-1].Topic != tp.Topic {
			ts := kmsg.NewLeaderAndISRRequestTopicState()
			ts.Topic = tp.Topic
			ts.TopicID = b.ctx.topicIDs[tp.Topic]
			req.TopicStates = append(req.TopicStates, ts)
		}
		ps := kmsg.NewLeaderAndISRRequestTopicPartition()
		ps.Partition = tp.Partition
		ps.ControllerEpoch = e.state.ControllerEpoch
		ps.Leader = e.state.Leader
		ps.LeaderEpoch = e.state.LeaderEpoch
		ps.ISR = orEmpty(e.state.ISR)
		ps.ZKVersion = e.state.PartitionEpoch
		ps.Replicas = orEmpty(e.assignment.Replicas)
		ps.AddingReplicas = orEmpty(e.assignment.Adding)
		ps.RemovingReplicas = orEmpty(e.assignment.Removing)
		ps.IsNew = e.isNew
		ps.LeaderRecoveryState = e.state.LeaderRecoveryState
		ts := &req.TopicStates[len(req.TopicStates)-1]
		ts.PartitionStates = append(ts.PartitionStates, ps)
		if e.state.Leader >= 0 {
			leaders[e.state.Leader] = true
		}
	}
	// LiveLeaders: the leaders named above that are live, with their
	// inter-broker endpoint.
	for _, id := range b.ctx.liveBrokerIDs() {
		if !leaders[id] {
			continue
		}
		if ep, ok := listenerEndpoint(b.ctx.brokers[id].Reg, listener); ok {
			ll := kmsg.NewLeaderAndISRRequestLiveLeader()
			ll.BrokerID, ll.Host, ll.Port = id, ep.Host, ep.Port
			req.LiveLeaders = append(req.LiveLeaders, ll)
		}
	}
	fitLeaderAndIsr(req)
	return req
}

func (b *requestBatch) updateMetadataRequest(ci controllerIdentity, broker int32, partitions map[kafkazk.TopicPartition]bool) *kmsg.UpdateMetadataRequest {
	req := kmsg.NewPtrUpdateMetadataRequest()
	req.Version = ci.ibp().UpdateMetadataVersion()
	req.ControllerID = ci.ID
	req.ControllerEpoch = ci.Epoch
	req.BrokerEpoch = b.ctx.brokers[broker].Epoch
	for _, tp := range sortedKeys(partitions) {
		st, ok := b.ctx.leadership[tp]
		a, known := b.ctx.assignment(tp)
		if !ok || !known {
			continue
		}
		if n := len(req.TopicStates); n == 0 || req.TopicStates[n-1].Topic != tp.Topic {
			ts := kmsg.NewUpdateMetadataRequestTopicState()
			ts.Topic = tp.Topic
			ts.TopicID = b.ctx.topicIDs[tp.Topic]
			req.TopicStates = append(req.TopicStates, ts)
		}
		ps := kmsg.NewUpdateMetadataRequestTopicPartition()
		ps.Partition = tp.Partition
		ps.ControllerEpoch = st.ControllerEpoch
		ps.Leader = st.Leader
		if b.ctx.topicsToDelete[tp.Topic] {
			ps.Leader = leaderDuringDelete
		}
		ps.LeaderEpoch = st.LeaderEpoch
		ps.ISR = orEmpty(st.ISR)
		ps.ZKVersion = st.PartitionEpoch
		ps.Replicas = orEmpty(a.Replicas)
		ps.OfflineReplicas = []int32{}
		for _, r := range a.Replicas {
			if !b.ctx.replicaOnline(tp, r) {
				ps.OfflineReplicas = append(ps.OfflineReplicas, r)
			}
		}
		ts := &req.TopicStates[len(req.TopicStates)-1]
		ts.PartitionStates = append(ts.PartitionStates, ps)
	}
	for _, id := range b.ctx.liveBrokerIDs() {
		reg := b.ctx.brokers[id].Reg
		lb := kmsg.NewUpdateMetadataRequestLiveBroker()
		lb.ID = id
		for _, e := range reg.Endpoints {
			ep := kmsg.NewUpdateMetadataRequestLiveBrokerEndpoint()
			ep.Port, ep.Host, ep.ListenerName = e.Port, e.Host, e.Listener
			ep.SecurityProtocol = securityProtocolID(e.SecurityProtocol)
			lb.Endpoints = append(lb.Endpoints, ep)
		}
		if reg.Rack != "" {
			rack := reg.Rack
			lb.Rack = &rack
		}
		req.LiveBrokers = append(req.LiveBrokers, lb)
	}
	fitUpdateMetadata(req)
	return req
}

func (b *requestBatch) stopReplicaRequest(ci controllerIdentity, broker int32, m map[kafkazk.TopicPartition]stopReplicaEntry) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.Version = ci.ibp().StopReplicaVersion()
	req.ControllerID = ci.ID
	req.ControllerEpoch = ci.Epoch
	req.BrokerEpoch = b.ctx.brokers[broker].Epoch
	for _, tp := range sortedKeys(m) {
		e := m[tp]
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewStopReplicaRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
		}
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition = tp.Partition
		ps.LeaderEpoch = e.leaderEpoch
		ps.Delete = e.delete
		t := &req.Topics[len(req.Topics)-1]
		t.PartitionStates = append(t.PartitionStates, ps)
	}
	return req
}

// securityProtocolID is Kafka's SecurityProtocol id.
func securityProtocolID(name string) int16 {
	switch name {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	}
	return 0
}

func listenerEndpoint(reg kafkazk.BrokerZNode, listener string) (kafkazk.Endpoint, bool) {
	return reg.ListenerEndpoint(listener)
}
