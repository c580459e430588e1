package server

import (
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica/fetcher"
)

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
		Quota:                        b.followerQuota,
	}, fetcher.KgoDialer{Opts: b.interBrokerOpts}, b.logger.With("component", "replica-fetcher"))
}

// leaderAddr finds where to fetch from: the LeaderAndIsr request's live
// leaders, else the metadata cache's inter-broker endpoint; "" when
// neither knows the leader.
func (b *Broker) leaderAddr(leader int32, live []kmsg.LeaderAndISRRequestLiveLeader) string {
	for _, l := range live {
		if l.BrokerID == leader {
			return net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
		}
	}
	if lb, ok := b.cluster.brokers[leader]; ok {
		if ep, ok := lb.Endpoints[b.cfg.InterBrokerListenerName]; ok {
			return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
		}
	}
	return ""
}
