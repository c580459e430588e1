package kafkazk

import (
	"fmt"

	"github.com/kbroker/kbroker/zkstore"
)

// StandaloneTopic is a topic as a standalone broker kept it before its
// metadata moved into a LocalStore: every partition on this broker alone.
type StandaloneTopic struct {
	Name       string
	ID         [16]byte
	Partitions int32
	Configs    map[string]string
	// LeaderEpochs are each partition's latest leader epoch in its log, so
	// that the epochs the controller hands out next are newer.
	LeaderEpochs []int32
}

// StandaloneState is what a standalone broker kept before the LocalStore:
// its topics, the cluster id of its log dirs, and the first producer id
// not handed out yet.
type StandaloneState struct {
	BrokerID       int32
	ClusterID      string
	Topics         []StandaloneTopic
	NextProducerID int64
}

// Seed writes a standalone broker's earlier state into a fresh store as the
// znodes a one-broker cluster would have: the topic and its assignment
// (every partition on this broker), each partition's state (this broker
// leading, alone in the ISR, at the epoch its log last saw), the topic
// configs, the cluster id and the producer id block. The broker then
// starts as if it had always run this way.
func Seed(s *zkstore.LocalStore, st StandaloneState) error {
	if !s.Fresh() {
		return fmt.Errorf("metadata store %s is not empty", s.Path())
	}
	zk := s.Connect()
	defer zk.Close()
	if err := CreateTopLevelPaths(zk); err != nil {
		return err
	}
	if st.ClusterID != "" {
		if err := CreateRecursive(zk, "/cluster"); err != nil {
			return err
		}
		if _, err := zk.Create(clusterIDPath, encodeClusterID(st.ClusterID), zkstore.ModePersistent); err != nil {
			return err
		}
	}
	if st.NextProducerID > 0 {
		block := ProducerIDBlockZNode{Broker: st.BrokerID, BlockStart: max(0, st.NextProducerID-ProducerIDBlockSize), BlockEnd: st.NextProducerID - 1}
		if _, err := zk.Set(ProducerIDBlockPath, block.Encode(), -1); err != nil {
			return err
		}
	}
	self := []int32{st.BrokerID}
	for _, t := range st.Topics {
		assignment := ReplicaMap{}
		for p := int32(0); p < t.Partitions; p++ {
			assignment[p] = self
		}
		ops := []zkstore.Op{
			&zkstore.OpCreate{Path: TopicPath(t.Name), Data: TopicZNode{Version: 3, TopicID: t.ID, Partitions: assignment}.Encode()},
			&zkstore.OpCreate{Path: topicPartitionsPath(t.Name)},
		}
		for p := int32(0); p < t.Partitions; p++ {
			epoch := int32(0)
			if int(p) < len(t.LeaderEpochs) {
				epoch = max(0, t.LeaderEpochs[p])
			}
			state := PartitionStateZNode{Leader: st.BrokerID, LeaderEpoch: epoch, ISR: self}
			ops = append(ops,
				&zkstore.OpCreate{Path: TopicPartitionPath(t.Name, p)},
				&zkstore.OpCreate{Path: PartitionStatePath(t.Name, p), Data: state.Encode()})
		}
		configs := t.Configs
		if configs == nil {
			configs = map[string]string{}
		}
		ops = append(ops, &zkstore.OpCreate{Path: ConfigEntityPath(ConfigTypeTopic, t.Name), Data: encodeConfigZNode(configs)})
		if _, err := zk.Multi(ops...); err != nil {
			return fmt.Errorf("topic %s: %w", t.Name, err)
		}
	}
	return nil
}
