package server

import (
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/replica/fetcher"
)

// followerReplica presents a hosted partition to the follower fetcher.
// (replica.Partition names its identity with fields; the fetcher asks
// through methods.)
type followerReplica struct{ p *replica.Partition }

var _ fetcher.Partition = followerReplica{}

func (f followerReplica) Topic() string             { return f.p.Topic }
func (f followerReplica) Index() int32              { return f.p.Index }
func (f followerReplica) TopicID() [16]byte         { return f.p.TopicID }
func (f followerReplica) CurrentLeaderEpoch() int32 { return f.p.CurrentLeaderEpoch() }
func (f followerReplica) LogStartOffset() int64     { return f.p.LogStartOffset() }
func (f followerReplica) LogEndOffset() int64       { return f.p.LogEndOffset() }
func (f followerReplica) HighWatermark() int64      { return f.p.HighWatermark() }

func (f followerReplica) LeaderEpochEntries() []logstore.EpochEntry {
	return f.p.Log().LeaderEpochEntries()
}

func (f followerReplica) AppendAsFollower(batches []logstore.Batch) (logstore.AppendInfo, error) {
	return f.p.AppendAsFollower(batches)
}

func (f followerReplica) TruncateTo(offset int64) error { return f.p.TruncateTo(offset) }

func (f followerReplica) TruncateFullyAndStartAt(offset int64) error {
	return f.p.TruncateFullyAndStartAt(offset)
}

// SetLeaderHighWatermark follows the leader's log start offset (retention
// and DeleteRecords on the leader reach the followers this way) and HW.
func (f followerReplica) SetLeaderHighWatermark(hw, leaderLogStartOffset int64) {
	if leaderLogStartOffset > f.p.LogStartOffset() && leaderLogStartOffset <= f.p.LogEndOffset() {
		if err := f.p.Log().DeleteRecordsBefore(leaderLogStartOffset); err != nil {
			return
		}
	}
	f.p.SetLeaderHighWatermark(hw)
}

// newFetchers builds the follower fetcher manager from the replica.* configs.
func (b *Broker) newFetchers() *fetcher.Manager {
	return fetcher.NewManager(fetcher.Config{
		BrokerID:                     b.cfg.BrokerID,
		NumReplicaFetchers:           int(b.cfg.NumReplicaFetchers),
		ReplicaFetchWaitMax:          b.cfg.ReplicaFetchWaitMax,
		ReplicaFetchMinBytes:         b.cfg.ReplicaFetchMinBytes,
		ReplicaFetchMaxBytes:         b.cfg.ReplicaFetchMaxBytes,
		ReplicaFetchResponseMaxBytes: b.cfg.ReplicaFetchResponseMaxBytes,
		ReplicaFetchBackoff:          b.cfg.ReplicaFetchBackoff,
		ReplicaSocketTimeout:         b.cfg.ReplicaSocketTimeout,
		Registerer:                   b.reg,
	}, fetcher.KgoDialer{}, b.logger.With("component", "replica-fetcher"))
}

// leaderEndpoint finds where to fetch from: the LeaderAndIsr request's
// live leaders, else the metadata cache's inter-broker endpoint.
func (b *Broker) leaderEndpoint(leader int32, live []kmsg.LeaderAndISRRequestLiveLeader) (fetcher.BrokerEndpoint, bool) {
	for _, l := range live {
		if l.BrokerID == leader {
			return fetcher.BrokerEndpoint{ID: leader, Addr: net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))}, true
		}
	}
	if lb, ok := b.cluster.brokers[leader]; ok {
		if ep, ok := lb.Endpoints[b.cfg.InterBrokerListenerName]; ok {
			return fetcher.BrokerEndpoint{ID: leader, Addr: net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))}, true
		}
	}
	return fetcher.BrokerEndpoint{}, false
}
