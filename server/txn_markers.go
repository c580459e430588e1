package server

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/server/txn"
)

// txnMarkerWriter delivers a transaction's COMMIT or ABORT marker to the
// leaders of its partitions (Kafka's TransactionMarkerChannelManager): one
// WriteTxnMarkers per leader, sent in parallel. The coordinator retries
// what fails.
type txnMarkerWriter struct{ b *Broker }

var _ txn.MarkerWriter = txnMarkerWriter{}

// writeTxnMarkersVersion is the version sent between brokers: v1 is
// flexible and what Kafka 3.9's coordinator sends.
const writeTxnMarkersVersion = 1

func (w txnMarkerWriter) WriteMarker(ctx context.Context, m txn.Marker) map[txn.TopicPartition]error {
	failed := map[txn.TopicPartition]error{}
	byLeader := map[int32][]txn.TopicPartition{}
	for _, tp := range m.Partitions {
		t := w.b.topic(tp.Topic)
		if t == nil {
			// Deleted since it joined the transaction: the coordinator
			// drops it, as Kafka's does on UNKNOWN_TOPIC_OR_PARTITION.
			failed[tp] = kerr.UnknownTopicOrPartition
			continue
		}
		s, ok := t.state(tp.Partition)
		if !ok {
			failed[tp] = kerr.UnknownTopicOrPartition
			continue
		}
		if s.Leader < 0 {
			// Kafka queues these for an unknown destination and retries
			// once the metadata names a leader.
			failed[tp] = kerr.LeaderNotAvailable
			continue
		}
		byLeader[s.Leader] = append(byLeader[s.Leader], tp)
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for leader, tps := range byLeader {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs := w.send(ctx, leader, m, tps)
			mu.Lock()
			for tp, err := range errs {
				failed[tp] = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(failed) == 0 {
		return nil
	}
	return failed
}

// send writes the marker to the partitions led by leader and returns the
// partitions that failed.
func (w txnMarkerWriter) send(ctx context.Context, leader int32, m txn.Marker, tps []txn.TopicPartition) map[txn.TopicPartition]error {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.SetVersion(writeTxnMarkersVersion)
	rm := kmsg.NewWriteTxnMarkersRequestMarker()
	rm.ProducerID, rm.ProducerEpoch, rm.Committed, rm.CoordinatorEpoch = m.ProducerID, m.ProducerEpoch, m.Commit, m.CoordinatorEpoch
	all := make([]TopicPartition, len(tps))
	for i, tp := range tps {
		all[i] = TopicPartition(tp)
	}
	for _, g := range groupByTopic(all) {
		rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		rt.Topic, rt.Partitions = g.topic, g.partitions
		rm.Topics = append(rm.Topics, rt)
	}
	req.Markers = append(req.Markers, rm)
	failed := map[txn.TopicPartition]error{}
	failAll := func(err error) map[txn.TopicPartition]error {
		for _, tp := range tps {
			failed[tp] = err
		}
		return failed
	}
	kresp, err := w.b.txnPeers.send(ctx, leader, req)
	if err != nil {
		w.b.logger.Debug("sending transaction markers", "leader", leader, "producer_id", m.ProducerID, "err", err)
		return failAll(err)
	}
	resp, ok := kresp.(*kmsg.WriteTxnMarkersResponse)
	if !ok || len(resp.Markers) != 1 {
		return failAll(kerr.UnknownServerError)
	}
	answered := map[txn.TopicPartition]bool{}
	for _, rt := range resp.Markers[0].Topics {
		for _, rp := range rt.Partitions {
			tp := txn.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			answered[tp] = true
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				failed[tp] = err
			}
		}
	}
	for _, tp := range tps {
		if !answered[tp] {
			failed[tp] = kerr.UnknownServerError
		}
	}
	return failed
}
