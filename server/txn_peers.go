package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/controller"
)

// txnPeers sends the requests of transactions between brokers: the
// coordinator's WriteTxnMarkers to partition leaders, and a leader's
// verification (AddPartitionsToTxn with VerifyOnly) to a coordinator. A
// request to this broker stays in-process; others go over one franz-go
// client per broker on its inter-broker endpoint, opened on first use.
type txnPeers struct {
	b *Broker

	once  sync.Once
	ch    controller.BrokerChannel
	close func()
}

// addressBook is the part of the channel that learns where brokers are.
type addressBook interface {
	AddBroker(brokerID int32, addr string)
}

func (t *txnPeers) send(ctx context.Context, brokerID int32, req kmsg.Request) (kmsg.Response, error) {
	t.once.Do(func() {
		t.ch, t.close = controller.OpenBrokerChannel(t.b.cfg.BrokerID, nil, t.b.selfRequest, t.b.interBrokerOpts...)
	})
	if t.ch == nil {
		return nil, errPeersClosed
	}
	if brokerID != t.b.cfg.BrokerID {
		addr := t.b.interBrokerAddr(brokerID)
		if addr == "" {
			return nil, fmt.Errorf("broker %d is not alive or has no %s endpoint", brokerID, t.b.cfg.InterBrokerListenerName)
		}
		if ab, ok := t.ch.(addressBook); ok {
			ab.AddBroker(brokerID, addr)
		}
	}
	return t.ch.Send(ctx, brokerID, req)
}

// shutdown closes the clients. The Once orders it after a first send in
// progress, and a send after it finds no channel.
func (t *txnPeers) shutdown() {
	t.once.Do(func() {})
	if t.close != nil {
		t.close()
	}
}

var errPeersClosed = errors.New("broker shutting down")

// interBrokerAddr is a live broker's inter-broker endpoint, "" when the
// metadata cache does not know one.
func (b *Broker) interBrokerAddr(id int32) string {
	for _, bi := range b.brokersFor(b.cfg.InterBrokerListenerName) {
		if bi.ID == id {
			return net.JoinHostPort(bi.Host, strconv.Itoa(int(bi.Port)))
		}
	}
	return ""
}

// topicPartitions is one topic's partitions in a request between brokers.
type topicPartitions struct {
	topic      string
	partitions []int32
}

// groupByTopic lists tps by topic, topics in first-seen order.
func groupByTopic(tps []TopicPartition) []topicPartitions {
	var out []topicPartitions
	idx := map[string]int{}
	for _, tp := range tps {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(out)
			idx[tp.Topic] = i
			out = append(out, topicPartitions{topic: tp.Topic})
		}
		out[i].partitions = append(out[i].partitions, tp.Partition)
	}
	return out
}
