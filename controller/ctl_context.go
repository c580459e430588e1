package controller

import (
	"slices"
	"sort"

	"github.com/kbroker/kbroker/kafkazk"
)

// partitionState is Kafka's PartitionState (PartitionStateMachine.scala).
type partitionState int

const (
	partitionNonExistent partitionState = iota
	partitionNew
	partitionOnline
	partitionOffline
)

// replicaAssignment is one partition's entry in /brokers/topics/<t>.
// During a reassignment (KIP-455) Replicas is RS = TRS ∪ ORS, Adding is
// TRS − ORS and Removing is ORS − TRS.
type replicaAssignment struct {
	Replicas []int32
	Adding   []int32
	Removing []int32
}

func (a replicaAssignment) isBeingReassigned() bool {
	return len(a.Adding) > 0 || len(a.Removing) > 0
}

// targetReplicas is TRS: the replicas the partition will have when the
// reassignment completes.
func (a replicaAssignment) targetReplicas() []int32 {
	return without(a.Replicas, a.Removing)
}

// originReplicas is ORS: the replicas before the reassignment.
func (a replicaAssignment) originReplicas() []int32 {
	return without(a.Replicas, a.Adding)
}

func without(rs, drop []int32) []int32 {
	out := []int32{}
	for _, r := range rs {
		if !slices.Contains(drop, r) {
			out = append(out, r)
		}
	}
	return out
}

// partitionLeadership is a state znode as the controller caches it
// (Kafka's LeaderIsrAndControllerEpoch): the leadership, its zkVersion,
// and the epoch of the controller that decided it.
type partitionLeadership struct {
	leaderAndIsr
	ControllerEpoch int32
}

// liveBroker is a registered broker and its epoch (the czxid of its
// registration, KIP-380).
type liveBroker struct {
	ID    int32
	Epoch int64
	Reg   kafkazk.BrokerZNode
}

// controllerContext is Kafka's ControllerContext: the controller's cache of
// ZooKeeper. Only the event loop touches it.
type controllerContext struct {
	brokers      map[int32]liveBroker
	shuttingDown map[int32]bool
	topicIDs     map[string][16]byte
	assignments  map[string]map[int32]replicaAssignment
	leadership   map[kafkazk.TopicPartition]partitionLeadership
	states       map[kafkazk.TopicPartition]partitionState
	// offlineReplicas are replicas a broker reported on a failed log
	// directory (KAFKA_STORAGE_ERROR in a LeaderAndIsr response).
	offlineReplicas map[kafkazk.TopicPartition]map[int32]bool
	// topicsToDelete are queued in /admin/delete_topics; deletionPending
	// holds, per topic being deleted, the replicas whose StopReplica
	// (delete) has not yet succeeded.
	topicsToDelete  map[string]bool
	deletionPending map[string]map[topicPartitionReplica]bool
}

type topicPartitionReplica struct {
	kafkazk.TopicPartition
	Replica int32
}

func newControllerContext() *controllerContext {
	return &controllerContext{
		brokers:         map[int32]liveBroker{},
		shuttingDown:    map[int32]bool{},
		topicIDs:        map[string][16]byte{},
		assignments:     map[string]map[int32]replicaAssignment{},
		leadership:      map[kafkazk.TopicPartition]partitionLeadership{},
		states:          map[kafkazk.TopicPartition]partitionState{},
		offlineReplicas: map[kafkazk.TopicPartition]map[int32]bool{},
		topicsToDelete:  map[string]bool{},
		deletionPending: map[string]map[topicPartitionReplica]bool{},
	}
}

// topicName is the topic with id id.
func (c *controllerContext) topicName(id [16]byte) (string, bool) {
	for name, tid := range c.topicIDs {
		if tid == id {
			return name, true
		}
	}
	return "", false
}

func (c *controllerContext) isLive(id int32) bool {
	_, ok := c.brokers[id]
	return ok
}

// replicaOnline: id is registered and its replica of tp is not in a
// failed log directory; a broker shutting down still counts.
func (c *controllerContext) replicaOnline(tp kafkazk.TopicPartition, id int32) bool {
	return c.isLive(id) && !c.offlineReplicas[tp][id]
}

// liveBrokerIDs are the brokers requests go to, shutting-down ones
// included, in id order.
func (c *controllerContext) liveBrokerIDs() []int32 {
	ids := make([]int32, 0, len(c.brokers))
	for id := range c.brokers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// liveness is the election view of one partition.
func (c *controllerContext) liveness(tp kafkazk.TopicPartition) liveness {
	l := liveness{Live: map[int32]bool{}, ShuttingDown: c.shuttingDown, OfflineReplicas: c.offlineReplicas[tp]}
	for id := range c.brokers {
		l.Live[id] = true
	}
	return l
}

func (c *controllerContext) assignment(tp kafkazk.TopicPartition) (replicaAssignment, bool) {
	a, ok := c.assignments[tp.Topic][tp.Partition]
	return a, ok
}

func (c *controllerContext) setAssignment(tp kafkazk.TopicPartition, a replicaAssignment) {
	m := c.assignments[tp.Topic]
	if m == nil {
		m = map[int32]replicaAssignment{}
		c.assignments[tp.Topic] = m
	}
	m[tp.Partition] = a
}

// allPartitions lists every known partition in (topic, partition) order,
// so that the requests a decision produces are deterministic.
func (c *controllerContext) allPartitions() []kafkazk.TopicPartition {
	var out []kafkazk.TopicPartition
	for t, ps := range c.assignments {
		for p := range ps {
			out = append(out, kafkazk.TopicPartition{Topic: t, Partition: p})
		}
	}
	sortPartitions(out)
	return out
}

func (c *controllerContext) partitionsOfTopic(topic string) []kafkazk.TopicPartition {
	var out []kafkazk.TopicPartition
	for p := range c.assignments[topic] {
		out = append(out, kafkazk.TopicPartition{Topic: topic, Partition: p})
	}
	sortPartitions(out)
	return out
}

// partitionsOnBroker are the partitions with a replica on id.
func (c *controllerContext) partitionsOnBroker(id int32) []kafkazk.TopicPartition {
	var out []kafkazk.TopicPartition
	for _, tp := range c.allPartitions() {
		a, _ := c.assignment(tp)
		if slices.Contains(a.Replicas, id) {
			out = append(out, tp)
		}
	}
	return out
}

func (c *controllerContext) removeTopic(topic string) {
	for _, tp := range c.partitionsOfTopic(topic) {
		delete(c.leadership, tp)
		delete(c.states, tp)
		delete(c.offlineReplicas, tp)
	}
	delete(c.assignments, topic)
	delete(c.topicIDs, topic)
	delete(c.topicsToDelete, topic)
	delete(c.deletionPending, topic)
}

// offlinePartitionCount is Kafka's OfflinePartitionsCount: partitions
// without a live leader, topics being deleted excluded.
func (c *controllerContext) offlinePartitionCount() int {
	n := 0
	for tp := range c.states {
		if c.topicsToDelete[tp.Topic] {
			continue
		}
		l, ok := c.leadership[tp]
		if !ok || !c.replicaOnline(tp, l.Leader) {
			n++
		}
	}
	return n
}

// preferredReplicaImbalanceCount is Kafka's ControllerContext gauge of the
// partitions, of topics not being deleted, whose leader is not their
// preferred (first) replica; a reassignment that adds the preferred
// replica counts only once that replica is in the ISR and still does not
// lead. Kafka keeps it up to date on every change; it is recounted here
// after each event, like offlinePartitionCount.
func (c *controllerContext) preferredReplicaImbalanceCount() int {
	n := 0
	for topic, parts := range c.assignments {
		if c.topicsToDelete[topic] {
			continue
		}
		for p, a := range parts {
			l, ok := c.leadership[kafkazk.TopicPartition{Topic: topic, Partition: p}]
			if !ok || len(a.Replicas) == 0 {
				continue
			}
			preferred := a.Replicas[0]
			var balanced bool
			if a.isBeingReassigned() && slices.Contains(a.Adding, preferred) {
				balanced = !slices.Contains(l.ISR, preferred)
			} else {
				balanced = l.Leader == preferred
			}
			if !balanced {
				n++
			}
		}
	}
	return n
}

func sortPartitions(tps []kafkazk.TopicPartition) {
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
}

// clearOfflineReplicas forgets the replicas marked offline (by log-dir
// failures) on broker, which started again.
func (c *controllerContext) clearOfflineReplicas(broker int32) {
	for tp, m := range c.offlineReplicas {
		delete(m, broker)
		if len(m) == 0 {
			delete(c.offlineReplicas, tp)
		}
	}
}
