package server

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

// Cluster-mode topic administration. As in Kafka's ZooKeeper mode the
// controller broker serves CreateTopics, DeleteTopics, CreatePartitions and
// the config APIs by writing znodes; the other brokers answer
// NOT_CONTROLLER, and clients retry against the controller Metadata names.
// Auto-creation (Metadata, FindCoordinator) is the exception: Kafka lets
// any broker write the new topic's znodes.

// clusterAdminTimeout bounds an admin operation, including the wait for
// the controller's LeaderAndIsr and UpdateMetadata to reach this broker.
const clusterAdminTimeout = 30 * time.Second

// clusterAdmin runs op on the controller broker, refusing elsewhere.
func (b *Broker) clusterAdmin(op func(context.Context, ClusterControl) error) error {
	c := b.cluster.control
	if c == nil || !c.IsController() {
		return kerr.NotController
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterAdminTimeout)
	defer cancel()
	return op(ctx, c)
}

// controllerRequestRefusal is the answer to a request only brokers send
// and only the controller serves (ControlledShutdown, AlterPartition,
// AllocateProducerIds): CLUSTER_AUTHORIZATION_FAILED without
// CLUSTER_ACTION on the cluster, NOT_CONTROLLER on any other broker, so
// that the sender looks for the controller again; 0 when it may go on.
func (b *Broker) controllerRequestRefusal(req *protocol.Request) int16 {
	switch {
	case !b.authorizeCluster(req, kmsg.ACLOperationClusterAction):
		return kerr.ClusterAuthorizationFailed.Code
	case !b.cluster.control.IsController():
		return kerr.NotController.Code
	}
	return 0
}

// createTopic has the controller write the topic's znodes, then waits
// until the metadata cache shows every partition with a leader, so that a
// client's next Metadata finds the topic (Kafka's DelayedCreatePartitions
// does the same wait). Errors are kerr errors suitable for a CreateTopics
// response.
func (b *Broker) createTopic(req CreateTopicRequest) (*Topic, error) {
	if err := b.cfg.ValidateTopicConfigs(req.Configs); err != nil {
		return nil, &configError{err}
	}
	c := b.cluster.control
	if c == nil {
		return nil, kerr.CoordinatorNotAvailable
	}
	if b.topic(req.Name) != nil {
		return nil, kerr.TopicAlreadyExists
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterAdminTimeout)
	defer cancel()
	creq := ClusterTopicRequest{
		Name:              req.Name,
		NumPartitions:     req.NumPartitions,
		ReplicationFactor: req.ReplicationFactor,
		Assignment:        req.Assignment,
		Configs:           req.Configs,
		ValidateOnly:      req.ValidateOnly,
	}
	if len(req.Assignment) == 0 {
		if creq.NumPartitions == -1 {
			creq.NumPartitions = b.cfg.NumPartitions
		}
		if creq.ReplicationFactor == -1 {
			creq.ReplicationFactor = b.cfg.DefaultReplicationFactor
		}
	} else {
		creq.NumPartitions, creq.ReplicationFactor = -1, -1
	}
	create := c.CreateTopic
	if req.Auto {
		create = c.AutoCreateTopic
	} else if !c.IsController() {
		return nil, kerr.NotController
	}
	if err := create(ctx, creq); err != nil {
		return nil, err
	}
	n := creq.NumPartitions
	if len(req.Assignment) > 0 {
		n = int32(len(req.Assignment))
	}
	if req.ValidateOnly {
		// The topic as it would be; without an assignment the placement
		// is not decided, only the replica count is known.
		t := &Topic{Name: req.Name, Partitions: make([]*replica.Partition, n), States: make([]PartitionState, n), Configs: req.Configs}
		for p := range t.States {
			if rs, ok := req.Assignment[int32(p)]; ok {
				t.States[p].Replicas = rs
			} else {
				t.States[p].Replicas = make([]int32, max(creq.ReplicationFactor, 0))
			}
		}
		return t, nil
	}
	err := b.awaitMetadata(ctx, func() bool {
		t := b.topic(req.Name)
		return t != nil && int32(len(t.States)) >= n && allLed(t)
	})
	// On a timeout the topic may be created but not yet led here: the
	// client's retry of Metadata will find it.
	if t := b.topic(req.Name); t != nil {
		return t, nil
	}
	return nil, err
}

// awaitMetadata waits until done reports that this broker's metadata shows
// an admin operation's outcome, polling it: the topic table changes only
// when the controller's requests arrive, a few milliseconds apart. It is
// REQUEST_TIMED_OUT when ctx ends first.
func (b *Broker) awaitMetadata(ctx context.Context, done func() bool) error {
	for !done() {
		select {
		case <-ctx.Done():
			return kerr.RequestTimedOut
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

func allLed(t *Topic) bool {
	for _, s := range t.States {
		if s.Leader < 0 {
			return false
		}
	}
	return true
}

// useTopicConfigs puts new overrides into force on this broker's logs of
// the topic. Other brokers learn them from ZooKeeper when they next open
// the topic's logs (dynamic config-change propagation to them is a gap:
// server/GAPS.md).
func (b *Broker) useTopicConfigs(name string, configs map[string]string) {
	t := b.topic(name)
	if t == nil {
		return
	}
	b.applyTopicLogConfigs(t, configs)
	b.mu.Lock()
	if cur := b.topic(name); cur == t {
		updated := *t
		updated.Configs = configs
		b.putTopicLocked(&updated)
	}
	b.mu.Unlock()
}

// brokerRegistered reports whether a broker id may be named in a replica
// assignment: a live broker.
func (b *Broker) brokerRegistered(id int32) bool {
	for _, lb := range b.cluster.liveBrokers() {
		if lb.ID == id {
			return true
		}
	}
	return false
}

// applyTopicLogConfigs puts a topic's overrides over the broker defaults
// in force on this broker's logs and partitions of it.
func (b *Broker) applyTopicLogConfigs(t *Topic, configs map[string]string) {
	lc := b.current().TopicLogConfig(configs)
	minIsr := b.partitionOptions(configs).MinInsyncReplicas
	for _, p := range t.Partitions {
		if p != nil {
			p.Log().SetConfig(lc)
			p.SetMinInsyncReplicas(minIsr)
		}
	}
}
