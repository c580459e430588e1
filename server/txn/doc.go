// Package txn is kbroker's transaction coordinator (Kafka's
// TransactionCoordinator, TransactionStateManager, TransactionMetadata and
// TransactionMarkerChannelManager, ZooKeeper-mode 3.9 behaviour: KIP-98
// transactions, KIP-360 producer re-initialisation, KIP-447 offsets in
// transactions, and KIP-890 part 1 partition verification).
//
// # API
//
// New builds a Coordinator over a Log (the __transaction_state
// partitions), a MarkerWriter (WriteTxnMarkers to partition leaders),
// ProducerIDs, a Clock and a logger. The broker calls LoadPartition /
// UnloadPartition with the coordinator epoch (the partition's leader epoch)
// as it gains and loses leadership of __transaction_state partitions, and
// PartitionFor to answer FindCoordinator. The API handlers are thin
// wrappers around one method per Kafka API, each taking the decoded kmsg
// request (its Version set) and returning the response of that version:
// InitProducerID, AddPartitionsToTxn (v0-3 from producers, v4-5 batched from
// brokers, with VerifyOnly), AddOffsetsToTxn (given the group's
// __consumer_offsets partition), EndTxn, DescribeTransactions and
// ListTransactions. The first four block until their record is in the log,
// so handlers call them from protocol.Response.Wait. Authorization is the
// handlers'. RegisterMetrics registers the Prometheus gauges; Close stops
// everything. AbortTimedOutTransactions and RemoveExpiredTransactionalIDs
// are the periodic passes, also callable directly.
//
// Clock, Timer and RealClock are internal/clock's, shared with the group
// coordinator. The tests' clock, clocktest.Fake, fires due timers inside
// Advance, and every marker attempt and retry runs from a timer, so marker
// retries, timeouts and expiry are tested without sleeping; MemLog,
// FakeMarkers and SeqIDs are the other fakes. PartitionFor is
// coordpartition.For over transaction.state.log.num.partitions.
//
// # Invariants
//
//   - A request is answered after its record is committed in the log, and
//     memory changes only when the append succeeded at an unchanged
//     coordinator epoch: what a producer was told is what a reloading
//     coordinator replays. While a transition is in flight the id is
//     "pending" and other requests get CONCURRENT_TRANSACTIONS.
//   - The state machine (state.go, metadata.go) is pure: transitions follow
//     Kafka's valid-previous-states table; completeTransition refuses a
//     target that is not what was prepared.
//   - No append prepared under an older coordinator epoch lands after the
//     replay of a newer one began (the per-partition gate); its result is
//     then dropped as NOT_COORDINATOR.
//   - A PrepareCommit/PrepareAbort is followed by markers on every
//     partition still known to the metadata, then CompleteCommit/
//     CompleteAbort, retried with backoff until written, the partition
//     moves away, or a newer producer or coordinator epoch fences it.
//   - Records use Kafka 3.9's schemas and versions in ZooKeeper mode (key
//     v0, value v0), so kafka-dump-log --transaction-log-decoder reads
//     them; expired ids get tombstones.
//   - Producer epochs never reach math.MaxInt16 for a producer: at 32766
//     InitProducerId moves to a new producer id, so the coordinator can
//     always fence by one more bump.
//
// # Locks
//
// Lock order: the partition gate, then txnMetadata.mu, then
// Coordinator.mu. Coordinator.mu guards
// the partition map, the completions and the timers, and is held only
// briefly. txnMetadata.mu guards one transactional id and is never held
// across Log.Append, WriteMarker or ProducerIDs.Generate, except that
// InitProducerId asks for a new producer id under it when the epochs run
// out, as Kafka does. The per-partition gate (a RWMutex) is taken with no
// other lock held: the read side around each Log.Append and the in-memory
// update after it, the write side once per LoadPartition, before its
// replay. Timer callbacks take the locks themselves.
package txn
