package server

// TxnOffsetCommit, versions 0-4.
//
// A transactional producer's offset commit (KIP-98; v3 carries the
// consumer's member id, generation and group.instance.id, KIP-447). The
// group coordinator (server/group) writes the offsets as a transactional
// batch of the producer to __consumer_offsets and keeps them pending until
// WriteTxnMarkers reports the transaction's outcome (Coordinator.
// CompleteTransaction). v4 is v3 that may answer TRANSACTION_ABORTABLE
// when the transaction coordinator does not know the group's partition in
// the transaction (KIP-890).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/server/group"
)

func init() { register(kmsg.TxnOffsetCommit.Int16(), 0, 4, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.TxnOffsetCommitRequest)
	r, denied, resp := b.txnOffsetCommitDenied(req, r)
	if resp != nil {
		return protocol.Response{Msg: resp}
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		resp := b.groups.TxnOffsetCommit(ctx, r)
		resp.Topics = append(resp.Topics, denied...)
		return protocol.Response{Msg: resp}
	}}
}

// verifyTxnOffsetCommit is the coordinator's Config.VerifyTransaction: the
// KIP-890 check, made after the group's status and before the commit is
// written, that the transaction coordinator has __consumer_offsets-
// v.Partition in the transaction of v.ProducerID at v.ProducerEpoch (Kafka's
// maybeStartTransactionVerificationForPartition). Its *kerr.Error answers
// every partition of the request; the coordinator maps it as Kafka's
// maybeConvertOffsetCommitError does (NETWORK_EXCEPTION becomes
// COORDINATOR_LOAD_IN_PROGRESS; INVALID_TXN_STATE and INVALID_PID_MAPPING
// pass through). It runs with no group lock held, so it may wait on
// another broker. The guard, taken from the partition before the round
// trip, is what the commit's append must carry (offsetsLog.
// AppendTransactional): a marker of the producer written meanwhile
// withdraws it, and the append is refused.
func (b *Broker) verifyTxnOffsetCommit(ctx context.Context, v group.TxnVerification) (group.VerificationGuard, error) {
	if !b.cfg.TransactionPartitionVerificationEnable {
		return 0, nil
	}
	p := b.offsetsPartition(v.Partition)
	if p == nil {
		return 0, kerr.NotCoordinator
	}
	started, err := p.StartTxnVerification(v.ProducerID)
	if err != nil || !started.Needed {
		return 0, err
	}
	tp := TopicPartition{offsetsTopic, v.Partition}
	confirmed := b.confirmGuarded(ctx, v.TransactionalID, v.ProducerID, v.ProducerEpoch, []guardedPartition{{tp, p, started.Guard}}, v.Abortable)[tp]
	return group.VerificationGuard(confirmed.guard), confirmed.err
}
