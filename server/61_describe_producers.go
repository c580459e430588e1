package server

// DescribeProducers, version 0: the idempotent producers a partition
// tracks (kafka-transactions describe-producers). CoordinatorEpoch is -1
// and CurrentTxnStartOffset -1: there are no transactions.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/server/producerstate"
)

func init() { register(kmsg.DescribeProducers.Int16(), 0, 0, handleDescribeProducers) }

func handleDescribeProducers(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeProducersRequest)
	resp := kmsg.NewPtrDescribeProducersResponse()
	resp.SetVersion(req.Version)
	now := time.Now()
	for _, rt := range r.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		t := b.topic(rt.Topic)
		for _, pi := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = pi
			p, perr := b.leaderPartition(t, pi)
			if perr != nil {
				sp.ErrorCode = errCode(perr)
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			pd := b.data.partData(p)
			pd.appendMu.Lock()
			ps, err := pd.producerState(p, now)
			if err == nil {
				ps.Producers(func(pr *producerstate.Producer) {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID = pr.ID
					ap.ProducerEpoch = int32(pr.Epoch)
					ap.LastSequence = pr.LastSeq()
					ap.LastTimestamp = pr.LastTimestamp
					ap.CoordinatorEpoch = -1
					ap.CurrentTxnStartOffset = -1
					sp.ActiveProducers = append(sp.ActiveProducers, ap)
				})
			}
			pd.appendMu.Unlock()
			if err != nil {
				sp.ErrorCode = errCode(err)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}
