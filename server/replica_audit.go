package server

// The online replica audit's wiring (docs/replica-audit.md): what this
// broker follows, as replica/audit needs it. The audit itself is in
// replica/audit and never touches the fetchers' state.

import (
	"strings"

	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/replica/audit"
	"github.com/kbroker/kbroker/replica/fetcher"
)

func (b *Broker) newReplicaAudit() *audit.Auditor {
	return audit.New(audit.Config{
		BrokerID:       b.cfg.BrokerID,
		Interval:       b.cfg.ReplicaAuditInterval,
		MaxBytesPerSec: b.cfg.ReplicaAuditMaxBytesPerSec,
		ChunkBytes:     b.cfg.ReplicaFetchMaxBytes,
		// A mismatch is read again after more than one fetch round of the
		// follower, which has truncated by then if it was about to.
		RecheckDelay:   2*b.cfg.ReplicaFetchWaitMax + b.cfg.ReplicaFetchBackoff,
		RequestTimeout: b.cfg.ReplicaSocketTimeout,
		Registerer:     b.reg,
		Logger:         b.logger.With("component", "replica-audit"),
	}, b.auditTargets, fetcher.KgoDialer{Opts: b.interBrokerOpts})
}

// auditTargets lists the partitions in step with their leaders, except
// those of compacted topics: the cleaner runs on each replica on its own,
// so cleaned segments legitimately differ between replicas.
func (b *Broker) auditTargets() []audit.Target {
	var out []audit.Target
	for _, f := range b.fetchers.Followed() {
		t := b.topic(f.Topic)
		if t == nil || strings.Contains(b.topicSetting(t, "cleanup.policy"), "compact") {
			continue
		}
		p := b.replicas.Get(f.Topic, f.Partition)
		if p == nil || p.IsLeader() {
			continue
		}
		out = append(out, audit.Target{
			TopicPartition: f.TopicPartition,
			TopicID:        p.TopicID,
			Leader:         f.Leader,
			Local:          auditedReplica{p},
		})
	}
	return out
}

// auditedReplica is a follower replica as the audit reads it.
type auditedReplica struct{ p *replica.Partition }

func (r auditedReplica) LogStartOffset() int64 { return r.p.LogStartOffset() }
func (r auditedReplica) HighWatermark() int64  { return r.p.HighWatermark() }
func (r auditedReplica) LeaderEpoch() int32    { return r.p.LeaderEpoch() }

func (r auditedReplica) Read(from, to int64, maxBytes int) ([]byte, error) {
	rr, err := r.p.Log().Read(from, to, maxBytes, true)
	if err != nil {
		return nil, err
	}
	return rr.Bytes()
}
