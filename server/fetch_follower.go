package server

// Follower fetching (KIP-392) on the fetch path; the rules are in
// replica/read_replica.go, the facts and their Kafka sources in
// docs/follower-fetching.md.

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/replica"
)

// replicaSelectorOf reads replica.selector.class; config.Load refused any
// class but Kafka's two.
func replicaSelectorOf(class string) replica.ReplicaSelector {
	if class == config.RackAwareReplicaSelectorClass {
		return replica.SelectRackAware
	}
	return replica.SelectLeader
}

// servingPartition is leaderPartition for a consumer that may read any
// replica (Fetch v11+): a follower serves it too (Kafka's
// localLogWithEpochOrThrow with requireLeader false); a replica not
// hosted here is NOT_LEADER_OR_FOLLOWER.
func (b *Broker) servingPartition(t *Topic, idx int32) (*replica.Partition, error) {
	p, err := b.leaderPartition(t, idx)
	if err != kerr.NotLeaderForPartition || t == nil || idx < 0 || int(idx) >= len(t.Partitions) {
		return p, err
	}
	if p := t.Partitions[idx]; p != nil && p.ServesConsumers() {
		return p, nil
	}
	return nil, err
}

// readReplicaChooser picks, for the partitions this broker leads, the
// replica a consumer in rack on listener is to read from
// (replica.Partition.PreferredReadReplica over the metadata cache's
// racks); -1 keeps it on the leader.
func (b *Broker) readReplicaChooser(rack, listener string) func(*replica.Partition, int64) int32 {
	sel := b.replicaSelector
	view := func(id int32) (*string, bool) { return b.cluster.brokerRack(id, listener) }
	return func(p *replica.Partition, fetchOffset int64) int32 {
		return p.PreferredReadReplica(sel, rack, fetchOffset, view)
	}
}

// brokerRack is live broker id's rack and whether it has an endpoint on
// listener (any, when listener is "": an in-process request); a broker
// not live has neither, as Kafka's getPartitionReplicaEndpoints leaves it
// out.
func (c *clusterState) brokerRack(id int32, listener string) (rack *string, hasEndpoint bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	lb, ok := c.brokers[id]
	if !ok {
		return nil, false
	}
	if listener != "" {
		if _, ok := lb.Endpoints[listener]; !ok {
			return nil, false
		}
	}
	return lb.Rack, true
}
