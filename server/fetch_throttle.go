package server

import (
	"slices"
	"strconv"
	"time"

	"github.com/kbroker/kbroker/replica/throttle"
)

// Replication quotas (KIP-73), the leader's and the follower's, as Kafka's
// ReplicationQuotaManager applies them: leader.replication.throttled.rate
// and follower.replication.throttled.rate are dynamic broker configs; the
// partitions they apply to are each topic's
// leader.replication.throttled.replicas and
// follower.replication.throttled.replicas entries naming this broker
// (docs/replication-quotas.md).

// leaderThrottles is ReplicaManager.shouldLeaderThrottle: a throttled
// partition's records are left out of the fetch of a follower outside the
// ISR while the leader's quota is exceeded.
func (f *fetchPlan) leaderThrottles(fp *fetchPart) bool {
	q := f.leaderQuota
	if q == nil || !q.Throttles() || !q.Throttled(fp.p.Topic, fp.p.Index) {
		return false
	}
	return !slices.Contains(fp.p.Isr(), f.replicaID) && q.Exceeded(time.Now())
}

// recordThrottledBytes counts what a follower's fetch carries of throttled
// partitions, in sync or not (KafkaApis.sizeOfThrottledPartitions).
func (f *fetchPlan) recordThrottledBytes() {
	q := f.leaderQuota
	if q == nil || !q.Throttles() {
		return
	}
	n := 0
	for _, fp := range f.parts {
		if fp.p != nil && fp.data != nil && q.Throttled(fp.p.Topic, fp.p.Index) {
			n += fp.data.Len()
		}
	}
	if n > 0 {
		q.Record(n, time.Now())
	}
}

// replicationThrottledRate is a side's rate in force: this broker's
// dynamic value, else the cluster default, else none (Kafka's
// BrokerConfigHandler reads only the dynamic layers).
func replicationThrottledRate(dynBroker, dynDefault map[string]string, key string) int64 {
	for _, layer := range []map[string]string{dynBroker, dynDefault} {
		if v, ok := layer[key]; ok {
			if n, err := parseNonNegative(v); err == nil {
				return n
			}
		}
	}
	return throttle.Unlimited
}

func parseNonNegative(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && n < 0 {
		err = strconv.ErrRange
	}
	return n, err
}

// Topic configs naming a topic's throttled replicas (QuotaConfig).
const (
	leaderThrottledReplicas   = "leader.replication.throttled.replicas"
	followerThrottledReplicas = "follower.replication.throttled.replicas"
)

// refreshThrottledReplicas puts the topics' throttled-replica lists into
// force on both quotas (Kafka's TopicConfigHandler does it per changed
// topic); every topic table change passes through here.
func (b *Broker) refreshThrottledReplicas(byName map[string]*Topic) {
	if b.leaderQuota == nil {
		return
	}
	var leader, follower map[string]string
	for name, t := range byName {
		if v, ok := t.Configs[leaderThrottledReplicas]; ok {
			if leader == nil {
				leader = map[string]string{}
			}
			leader[name] = v
		}
		if v, ok := t.Configs[followerThrottledReplicas]; ok {
			if follower == nil {
				follower = map[string]string{}
			}
			follower[name] = v
		}
	}
	if leader != nil || b.leaderQuota.Throttles() {
		b.leaderQuota.ReplaceThrottledReplicas(leader, b.cfg.BrokerID)
	}
	if follower != nil || b.followerQuota.Throttles() {
		b.followerQuota.ReplaceThrottledReplicas(follower, b.cfg.BrokerID)
	}
}

// applyReplicationRates puts the dynamic rates of cfg into force.
func (b *Broker) applyReplicationRates(dynBroker, dynDefault map[string]string) {
	b.leaderQuota.SetRate(replicationThrottledRate(dynBroker, dynDefault, "leader.replication.throttled.rate"))
	b.followerQuota.SetRate(replicationThrottledRate(dynBroker, dynDefault, "follower.replication.throttled.rate"))
}
