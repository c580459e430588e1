// Package producerstate tracks idempotent producers per partition, the
// state Kafka keeps in ProducerStateManager: for each producer id its
// current epoch and the metadata of its last five batches, which is what
// lets a leader recognise a retried batch and answer it with its original
// offset instead of appending it twice.
//
// API: State is one partition's table. Check decides, for one batch about
// to be appended, whether it is new (Append), a duplicate (with the
// original offsets) or refused (a kerr error); Update records an appended
// batch, a leader's or a follower's, also when replaying the log. Evict
// and Expire drop producers whose data left the log or that have been
// idle too long.
//
// Invariants: per producer, the cached batches have strictly increasing
// offsets and, within one epoch, contiguous sequences (modulo 2^31);
// at most MaxCachedBatches are kept.
//
// Transactions (txn.go, docs/transactions-log.md): a transactional batch
// starts its producer's transaction, a marker (control batch) ends it and
// Update returns it as a CompletedTxn; FirstUnstableOffset and
// OnHighWatermark give the last stable offset's rules. CheckFrom applies
// the rules of a batch's Origin (client or coordinator), including the
// marker's epoch checks and INVALID_TXN_STATE.
//
// Snapshots: EncodeSnapshot and DecodeSnapshot read and write Kafka's
// producer snapshot files (docs/producer-snapshots.md), which keep each
// producer's last batch only.
//
// Locks: none. A State belongs to one partition's log, which holds its own
// lock across Check, the append and Update, so that the sequence check and
// the append are atomic.
package producerstate
