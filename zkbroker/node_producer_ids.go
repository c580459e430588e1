package zkbroker

import (
	"context"
	"errors"
	"fmt"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// ClaimProducerIDBlock reserves the next block of producer ids for this
// broker in /latest_producer_id_block, as Kafka's ZooKeeper-mode
// ProducerIdManager does: read the znode, write the next block
// conditionally on its version, retry on a conflict. It returns the block
// as [start, end) so every broker hands out ids no other broker does.
func (n *Node) ClaimProducerIDBlock() (start, end int64, err error) {
	return n.claimProducerIDBlockFor(n.cfg.BrokerID)
}

// AllocateProducerIDs is the controller's side of AllocateProducerIds
// (KIP-730), which brokers send from inter.broker.protocol.version 3.0-IV0
// instead of writing /latest_producer_id_block themselves: the sender must
// be registered at the epoch it names, and the block is written in its
// name (KafkaController.processAllocateProducerIds).
func (n *Node) AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (start, end int64, err error) {
	c, err := n.controller()
	if err != nil {
		return 0, 0, err
	}
	if err := c.CheckBrokerEpoch(ctx, brokerID, brokerEpoch); err != nil {
		return 0, 0, err
	}
	return n.claimProducerIDBlockFor(brokerID)
}

func (n *Node) claimProducerIDBlockFor(brokerID int32) (start, end int64, err error) {
	zk, err := n.client()
	if err != nil {
		return 0, 0, err
	}
	for attempt := 0; attempt < 100; attempt++ {
		data, st, err := zk.Get(kafkazk.ProducerIDBlockPath)
		next := int64(0)
		version := int32(-1)
		switch {
		case errors.Is(err, zkstore.ErrNoNode):
			// Created by createTopLevelPaths normally; a missing node
			// starts the first block.
		case err != nil:
			return 0, 0, err
		default:
			version = st.Version
			if len(data) > 0 {
				cur, derr := kafkazk.DecodeProducerIDBlockZNode(data)
				if derr != nil {
					return 0, 0, derr
				}
				next = cur.BlockEnd + 1
			}
		}
		blk := kafkazk.ProducerIDBlockZNode{Broker: brokerID, BlockStart: next, BlockEnd: next + kafkazk.ProducerIDBlockSize - 1}
		if version < 0 {
			_, err = zk.Create(kafkazk.ProducerIDBlockPath, blk.Encode(), zkstore.ModePersistent)
			if errors.Is(err, zkstore.ErrNodeExists) {
				continue
			}
		} else {
			_, err = zk.Set(kafkazk.ProducerIDBlockPath, blk.Encode(), version)
			if errors.Is(err, zkstore.ErrBadVersion) {
				continue
			}
		}
		if err != nil {
			return 0, 0, err
		}
		return blk.BlockStart, blk.BlockEnd + 1, nil
	}
	return 0, 0, fmt.Errorf("%s: too many conflicting writers", kafkazk.ProducerIDBlockPath)
}
