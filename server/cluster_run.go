package server

import (
	"context"
	"fmt"
	"time"

	"github.com/kbroker/kbroker/zkbroker"
)

// newNode builds this broker's side of the cluster from the config and the
// advertised endpoints (with the ports really bound), on ZooKeeper or, with
// no zookeeper.connect, on the local store.
func (b *Broker) newNode() (*zkbroker.Node, error) {
	var eps []zkbroker.Endpoint
	for _, l := range b.cfg.AdvertisedListeners {
		host, port := b.AdvertisedEndpoint(l.Name)
		eps = append(eps, zkbroker.Endpoint{Listener: l.Name, Host: host, Port: port, SecurityProtocol: b.cfg.SecurityProtocol(l.Name)})
	}
	var sessionDir string
	if b.store == nil && len(b.cfg.LogDirs) > 0 {
		sessionDir = b.cfg.LogDirs[0]
	}
	return zkbroker.New(zkbroker.Config{
		BrokerID:                           b.cfg.BrokerID,
		ZooKeeperConnect:                   b.cfg.ZookeeperConnect,
		SessionTimeout:                     b.cfg.ZookeeperSessionTimeout,
		ConnectionTimeout:                  b.cfg.ZookeeperConnectionTimeout,
		SessionDir:                         sessionDir,
		BrokerProbeInterval:                probeInterval(b.cfg.BrokerProbeInterval),
		InterBrokerProtocol:                b.cfg.InterBrokerProtocolVersion,
		InterBrokerListener:                b.cfg.InterBrokerListenerName,
		Endpoints:                          eps,
		Rack:                               b.cfg.BrokerRack,
		UncleanLeaderElectionEnable:        b.cfg.UncleanLeaderElectionEnable,
		AutoLeaderRebalanceEnable:          b.cfg.AutoLeaderRebalanceEnable,
		LeaderImbalanceCheckInterval:       b.cfg.LeaderImbalanceCheckInterval,
		LeaderImbalancePerBrokerPercentage: int(b.cfg.LeaderImbalancePerBrokerPercentage),
		Registerer:                         b.reg,
		Store:                              b.store,
		Self:                               b.selfRequest,
		ClientOpts:                         b.interBrokerOpts,
	}, b.logger.With("component", "cluster"))
}

// adoptClusterID waits for the cluster id from ZooKeeper (or for the
// ZooKeeper side to fail) and records it with the broker id in every log
// dir's meta.properties. A log dir that belongs to another cluster stops
// the broker, as in Kafka.
func (b *Broker) adoptClusterID(ctx context.Context, node *zkbroker.Node, nodeFailed <-chan struct{}) error {
	deadline := time.Now().Add(b.cfg.ZookeeperSessionTimeout + 30*time.Second)
	for node.ClusterID() == "" {
		if time.Now().After(deadline) {
			return fmt.Errorf("no cluster id from ZooKeeper at %s", b.cfg.ZookeeperConnect)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-nodeFailed:
			// Run reports why; stop waiting for what will not come.
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := b.logs.SetMeta(b.cfg.BrokerID, node.ClusterID()); err != nil {
		return fmt.Errorf("log dirs: %w", err)
	}
	return nil
}

// probeInterval maps broker.probe.interval.ms, where 0 is off, onto
// zkbroker's convention, where zero is the default and negative is off.
func probeInterval(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
