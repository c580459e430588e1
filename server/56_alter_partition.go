package server

// AlterPartition, versions 0-3 (KIP-497). From
// inter.broker.protocol.version 2.7-IV2 a partition leader asks the
// controller to change its ISR instead of writing the state znode; the
// controller checks the leader and partition epochs, writes the change and
// answers with the partition's new state (controller/ctl_alter_partition.go).
// Only the controller serves it: other brokers answer NOT_CONTROLLER, as
// Kafka's do, and the leader looks for the controller again.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AlterPartition.Int16(), 0, 3, handleAlterPartition) }

func handleAlterPartition(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AlterPartitionRequest)
	resp := r.ResponseKind().(*kmsg.AlterPartitionResponse)
	if code := b.controllerRequestRefusal(req); code != 0 {
		resp.ErrorCode = code
		return protocol.Response{Msg: resp}
	}
	var items []controller.AlterPartitionItem
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			it := controller.AlterPartitionItem{Partition: rp.Partition, LeaderEpoch: rp.LeaderEpoch,
				LeaderRecoveryState: rp.LeaderRecoveryState, PartitionEpoch: rp.PartitionEpoch, NewIsr: rp.NewISR}
			if req.Version >= 2 {
				it.TopicID = rt.TopicID
			} else {
				it.Topic = rt.Topic
			}
			if req.Version >= 3 {
				// The members' broker epochs (KIP-903) are not checked: a
				// ZooKeeper-mode controller, as Kafka's, judges members by
				// liveness alone.
				it.NewIsr = make([]int32, len(rp.NewEpochISR))
				for i, m := range rp.NewEpochISR {
					it.NewIsr[i] = m.BrokerID
				}
			}
			items = append(items, it)
		}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		results, err := b.cluster.control.AlterPartition(ctx, r.BrokerID, r.BrokerEpoch, req.Version, items)
		if err != nil {
			resp.ErrorCode = errCode(err)
			return protocol.Response{Msg: resp}
		}
		i := 0
		for _, rt := range r.Topics {
			t := kmsg.NewAlterPartitionResponseTopic()
			t.Topic, t.TopidID = rt.Topic, rt.TopicID // kmsg spells the field so
			for _, rp := range rt.Partitions {
				res := results[i]
				i++
				p := kmsg.NewAlterPartitionResponseTopicPartition()
				p.Partition = rp.Partition
				if res.Err != nil {
					p.ErrorCode = errCode(res.Err)
				} else {
					p.LeaderID, p.LeaderEpoch, p.ISR = res.Leader, res.LeaderEpoch, res.ISR
					p.LeaderRecoveryState, p.PartitionEpoch = res.LeaderRecoveryState, res.PartitionEpoch
				}
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return protocol.Response{Msg: resp}
	}}
}
