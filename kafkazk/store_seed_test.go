package kafkazk

import (
	"testing"

	"github.com/kbroker/kbroker/zkstore"
)

func TestLocalStoreSeed(t *testing.T) {
	dir := t.TempDir()
	s, err := zkstore.OpenLocalStore(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := [16]byte{1, 2, 3}
	err = Seed(s, StandaloneState{BrokerID: 7, ClusterID: "abc", NextProducerID: 5000,
		Topics: []StandaloneTopic{{Name: "t", ID: id, Partitions: 2, Configs: map[string]string{"retention.ms": "1"}, LeaderEpochs: []int32{0, 4}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Seed(s, StandaloneState{BrokerID: 7}); err == nil {
		t.Error("a second seed was accepted")
	}
	c := s.Connect()
	defer c.Close()
	data, _, err := c.Get(TopicPath("t"))
	if err != nil {
		t.Fatal(err)
	}
	tz, err := DecodeTopicZNode(data)
	if err != nil || tz.TopicID != id || len(tz.Partitions) != 2 || tz.Partitions[1][0] != 7 {
		t.Errorf("topic znode %+v, %v", tz, err)
	}
	data, _, _ = c.Get(PartitionStatePath("t", 1))
	ps, err := DecodePartitionStateZNode(data)
	if err != nil || ps.Leader != 7 || ps.LeaderEpoch != 4 || len(ps.ISR) != 1 {
		t.Errorf("partition state %+v, %v", ps, err)
	}
	data, _, _ = c.Get(ConfigEntityPath(ConfigTypeTopic, "t"))
	if cfg, err := DecodeConfigZNode(data); err != nil || cfg["retention.ms"] != "1" {
		t.Errorf("topic config %v, %v", cfg, err)
	}
	data, _, _ = c.Get(clusterIDPath)
	if cid, err := decodeClusterID(data); err != nil || cid != "abc" {
		t.Errorf("cluster id %q, %v", cid, err)
	}
	data, _, _ = c.Get(ProducerIDBlockPath)
	if blk, err := DecodeProducerIDBlockZNode(data); err != nil || blk.BlockEnd != 4999 {
		t.Errorf("producer id block %+v, %v", blk, err)
	}
}
