package controller

import (
	"testing"
)

func TestLocalStoreSeed(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := [16]byte{1, 2, 3}
	err = s.Seed(StandaloneState{BrokerID: 7, ClusterID: "abc", NextProducerID: 5000,
		Topics: []StandaloneTopic{{Name: "t", ID: id, Partitions: 2, Configs: map[string]string{"retention.ms": "1"}, LeaderEpochs: []int32{0, 4}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seed(StandaloneState{BrokerID: 7}); err == nil {
		t.Error("a second seed was accepted")
	}
	c := s.connect()
	defer c.Close()
	data, _, err := c.Get(topicPath("t"))
	if err != nil {
		t.Fatal(err)
	}
	tz, err := decodeTopicZNode(data)
	if err != nil || tz.TopicID != id || len(tz.Partitions) != 2 || tz.Partitions[1][0] != 7 {
		t.Errorf("topic znode %+v, %v", tz, err)
	}
	data, _, _ = c.Get(partitionStatePath("t", 1))
	ps, err := decodePartitionStateZNode(data)
	if err != nil || ps.Leader != 7 || ps.LeaderEpoch != 4 || len(ps.ISR) != 1 {
		t.Errorf("partition state %+v, %v", ps, err)
	}
	data, _, _ = c.Get(configEntityPath(configTypeTopic, "t"))
	if cfg, err := decodeConfigZNode(data); err != nil || cfg["retention.ms"] != "1" {
		t.Errorf("topic config %v, %v", cfg, err)
	}
	data, _, _ = c.Get(clusterIDPath)
	if cid, err := decodeClusterID(data); err != nil || cid != "abc" {
		t.Errorf("cluster id %q, %v", cid, err)
	}
	data, _, _ = c.Get(producerIDBlockPath)
	if blk, err := decodeProducerIDBlockZNode(data); err != nil || blk.BlockEnd != 4999 {
		t.Errorf("producer id block %+v, %v", blk, err)
	}
}
