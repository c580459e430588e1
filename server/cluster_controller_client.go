package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/replica"

	"github.com/kbroker/kbroker/internal/clock"
	"github.com/kbroker/kbroker/internal/wirefix"
)

// controllerClient carries what a broker asks of the controller from the
// inter.broker.protocol.versions where Kafka's brokers ask instead of
// writing ZooKeeper themselves:
//   - ISR changes from 2.7-IV2 (AlterPartition, KIP-497): it is the
//     partition leaders' replica.IsrWriter, and the controller, kbroker's
//     or Kafka's, writes the change and tells every broker;
//   - producer id blocks from 3.0-IV0 (AllocateProducerIds, KIP-730).
//
// When this broker is the controller it calls it directly.
type controllerClient struct {
	b *Broker

	mu   sync.Mutex
	addr string // the controller's inter-broker address cl talks to
	cl   *kgo.Client
}

// alterPartitionTimeout bounds one AlterPartition round trip; the leader
// proposes the change again on its next check when it runs out.
const alterPartitionTimeout = 10 * time.Second

// errAlterPartitionRefused is an answer that leaves the ISR as it is until
// the controller's next LeaderAndIsr (a newer leader or partition epoch),
// as a version conflict does on the ZooKeeper path.
var errAlterPartitionRefused = errors.New("AlterPartition refused")

// controllerShrinkWait is how long a leader's ISR shrink waits for the
// controller's answer before the leader writes the shrink to ZooKeeper
// itself. A controller that is there answers within milliseconds. One
// that stopped answering (paused, cut off from the brokers, killed with
// its registration still in place) is replaced only once the others judge
// it gone, seconds later; until then the silent follower stays in the ISR
// and every acks=all write to the partition waits.
const controllerShrinkWait = time.Second

// isrShrinkWriter writes a leader's ISR shrink to ZooKeeper itself
// (nodeControl in cluster mode).
type isrShrinkWriter interface {
	ShrinkIsrPastController(topic string, partition int32, leader int32, ch replica.IsrChange) (int32, error)
}

// WriteIsr sends the leader's ISR change to the controller. A shrink the
// controller does not answer within controllerShrinkWait is written to the
// state znode by the leader, conditional on the partition epoch it knows,
// as leaders below inter.broker.protocol.version 2.7-IV2 write every
// change: a version conflict still stops it if the controller changed the
// partition meanwhile. Only a shrink whose remaining followers are
// fetching goes past the controller (IsrChange.FollowersFetching): then
// this leader is not the broker cut off. A leader that is cut off loses
// every follower at once; written past the controller, its shrinks would
// leave the controller an ISR of this leader alone to elect from, or one
// follower where it could have had two. Expansions wait for the
// controller too: a member it adds must be a live broker, which only the
// controller knows.
func (w *controllerClient) WriteIsr(topic string, partition int32, leader int32, ch replica.IsrChange) (int32, error) {
	direct, _ := w.b.cluster.control.(isrShrinkWriter)
	if ch.Kind != replica.IsrShrink || !ch.FollowersFetching || direct == nil || w.b.controllerIsSelf() {
		return w.alterPartition(alterPartitionTimeout, topic, partition, leader, ch)
	}
	v, err := w.alterPartition(controllerShrinkWait, topic, partition, leader, ch)
	if !errors.Is(err, replica.ErrIsrWriteUnsent) {
		return v, err
	}
	w.b.logger.Info("AlterPartition unanswered; the leader writes its ISR shrink to ZooKeeper itself",
		"topic", topic, "partition", partition, "isr", ch.Isr, "err", err)
	return direct.ShrinkIsrPastController(topic, partition, leader, ch)
}

// alterPartition is one AlterPartition round trip for ch, bounded by
// timeout.
func (w *controllerClient) alterPartition(timeout time.Duration, topic string, partition int32, leader int32, ch replica.IsrChange) (int32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	b := w.b
	item := controller.AlterPartitionItem{Topic: topic, Partition: partition, LeaderEpoch: ch.LeaderEpoch,
		NewIsr: ch.Isr, PartitionEpoch: ch.PartitionEpoch}
	var res controller.AlterPartitionResult
	if b.controllerIsSelf() {
		out, err := b.cluster.control.AlterPartition(ctx, leader, b.cluster.control.BrokerEpoch(), alterPartitionVersion, []controller.AlterPartitionItem{item})
		if err != nil {
			return 0, fmt.Errorf("%w: AlterPartition: %w", replica.ErrIsrWriteUnsent, err)
		}
		res = out[0]
	} else {
		var err error
		if res, err = w.send(ctx, leader, item); err != nil {
			return 0, fmt.Errorf("%w: AlterPartition: %w", replica.ErrIsrWriteUnsent, err)
		}
	}
	switch {
	case res.Err == nil:
		return res.PartitionEpoch, nil
	case errors.Is(res.Err, kerr.InvalidUpdateVersion), errors.Is(res.Err, kerr.FencedLeaderEpoch),
		errors.Is(res.Err, kerr.UnknownTopicOrPartition), errors.Is(res.Err, kerr.InvalidRequest):
		return 0, fmt.Errorf("%w: %w", errAlterPartitionRefused, res.Err)
	case errors.Is(res.Err, kerr.IneligibleReplica), errors.Is(res.Err, kerr.OperationNotAttempted):
		w.b.logger.Info("AlterPartition refused: a new ISR member is not live or is shutting down", "topic", topic, "partition", partition, "isr", ch.Isr, "err", res.Err)
		return 0, fmt.Errorf("%w: AlterPartition: %w", replica.ErrIsrReplicaIneligible, res.Err)
	default:
		// NOT_CONTROLLER and the like: propose again on the next check,
		// against what the leader knows then (Kafka's AlterPartitionManager
		// retries).
		w.b.logger.Info("AlterPartition not applied; proposing again", "topic", topic, "partition", partition, "isr", ch.Isr, "err", res.Err)
		return 0, fmt.Errorf("%w: AlterPartition: %w", replica.ErrIsrWriteUnsent, res.Err)
	}
}

// RecordIsrChange does nothing: the controller made the change itself and
// has told every broker.
func (w *controllerClient) RecordIsrChange(string, int32) {}

// alterPartitionVersion: v1, with topic names and the leader recovery
// state, is served by every controller that serves AlterPartition. It is
// a cap (wirefix.Capped): left to itself franz-go sent v3, which names
// topics by id, and every answer was UNKNOWN_TOPIC_ID.
const alterPartitionVersion = 1

func (w *controllerClient) send(ctx context.Context, leader int32, item controller.AlterPartitionItem) (controller.AlterPartitionResult, error) {
	var none controller.AlterPartitionResult
	cl, addr, err := w.client()
	if err != nil {
		return none, err
	}
	ctx, stop := w.b.whileController(ctx, addr)
	defer stop()
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = alterPartitionVersion
	req.BrokerID, req.BrokerEpoch = leader, w.b.cluster.control.BrokerEpoch()
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.Topic = item.Topic
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.NewISR, rp.PartitionEpoch = item.Partition, item.LeaderEpoch, item.NewIsr, item.PartitionEpoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return none, errors.New("no client for the controller")
	}
	kresp, err := seeds[0].Request(ctx, wirefix.Capped{Request: req, Max: alterPartitionVersion})
	if err != nil {
		w.reset()
		return none, err
	}
	resp := kresp.(*kmsg.AlterPartitionResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return none, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return none, fmt.Errorf("AlterPartition answer names %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	return controller.AlterPartitionResult{Err: kerr.ErrorForCode(p.ErrorCode), Leader: p.LeaderID, LeaderEpoch: p.LeaderEpoch,
		ISR: p.ISR, LeaderRecoveryState: p.LeaderRecoveryState, PartitionEpoch: p.PartitionEpoch}, nil
}

// client is a client for the current controller's inter-broker endpoint,
// kept while the controller stays the same, and that endpoint.
func (w *controllerClient) client() (*kgo.Client, string, error) {
	b := w.b
	addr, err := b.controllerAddr()
	if err != nil {
		return nil, "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cl != nil && w.addr == addr {
		return w.cl, addr, nil
	}
	if w.cl != nil {
		w.cl.Close()
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0)}, b.interBrokerOpts...)...)
	if err != nil {
		return nil, "", err
	}
	w.cl, w.addr = cl, addr
	return cl, addr, nil
}

// controllerCheckInterval is how often a request waiting on the controller
// looks whether another broker has become controller.
const controllerCheckInterval = 100 * time.Millisecond

// whileController returns ctx, ended early, with cause errControllerMoved,
// once the controller is no longer the broker at addr. A request to a
// controller that stopped answering (paused, cut off) would otherwise wait
// out its whole timeout after the other brokers had elected another: a
// leader's ISR change, and every acks=all write waiting for it, would wait
// with it, and so would a broker's controlled shutdown.
func (b *Broker) whileController(ctx context.Context, addr string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go clock.Every(ctx, controllerCheckInterval, func() {
		if now, err := b.controllerAddr(); err != nil || now != addr {
			cancel(errControllerMoved)
		}
	})
	return ctx, func() { cancel(nil) }
}

// errControllerMoved ends a request to a broker that is no longer the
// controller.
var errControllerMoved = errors.New("the controller moved while the request waited")

// reset drops the client after a failed round trip; the next one dials
// the controller afresh.
func (w *controllerClient) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cl != nil {
		w.cl.Close()
		w.cl, w.addr = nil, ""
	}
}

// allocateProducerIDs asks the controller for the next block of producer
// ids (AllocateProducerIds, KIP-730) and returns it as [start, end).
func (w *controllerClient) allocateProducerIDs() (int64, int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), alterPartitionTimeout)
	defer cancel()
	b := w.b
	epoch := b.cluster.control.BrokerEpoch()
	if b.controllerIsSelf() {
		start, end, err := b.cluster.control.AllocateProducerIDs(ctx, b.cfg.BrokerID, epoch)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %v", kerr.CoordinatorNotAvailable, err)
		}
		return start, end, nil
	}
	cl, addr, err := w.client()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", kerr.CoordinatorNotAvailable, err)
	}
	ctx, stop := w.b.whileController(ctx, addr)
	defer stop()
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = b.cfg.BrokerID, epoch
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return 0, 0, kerr.CoordinatorNotAvailable
	}
	kresp, err := seeds[0].Request(ctx, req)
	if err != nil {
		w.reset()
		return 0, 0, fmt.Errorf("%w: AllocateProducerIds: %w", kerr.CoordinatorNotAvailable, err)
	}
	resp := kresp.(*kmsg.AllocateProducerIDsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		// The client asking for a producer id may retry; what the
		// controller said is for this log.
		b.logger.Info("AllocateProducerIds refused", "err", err)
		return 0, 0, fmt.Errorf("%w: AllocateProducerIds: %v", kerr.CoordinatorNotAvailable, err)
	}
	if resp.ProducerIDLen <= 0 {
		return 0, 0, fmt.Errorf("AllocateProducerIds: an empty block at %d", resp.ProducerIDStart)
	}
	return resp.ProducerIDStart, resp.ProducerIDStart + int64(resp.ProducerIDLen), nil
}
