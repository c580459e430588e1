// Package logstore is kbroker's partition storage: a segmented log in
// Apache Kafka's own on-disk format, so Kafka's tools (kafka-dump-log)
// read our files and we could read theirs.
//
// API surface:
//   - Log, the contract for one partition's log, with two implementations:
//     FileLog (on disk), and MemLog (memlog_test.go), an in-memory model
//     of it for logstore's own tests; both pass the conformance suite in
//     conformance_test.go. Other packages' tests open a FileLog in a
//     temporary directory with logstore/logtest.New.
//   - Manager: the broker's log dirs (meta.properties, .lock, the
//     clean-shutdown marker, recovery-point and log-start checkpoints),
//     partition logs by topic/partition, periodic retention, compaction,
//     flushes and checkpoints (Run).
//   - Batch codecs: ParseBatches (produce-path validation without record
//     decoding), DecodeRecords (decompress + kmsg.Record), BuildBatch;
//     DecodeTxnMarker / DecodeControlKey for control records, DecodeTxnIndex
//     for .txnindex files.
//   - Transactions (docs/transactions-log.md): AppendAsLeaderFrom (client or
//     coordinator origin), AppendMarkerAsLeader, LastStableOffset,
//     AbortedTransactions.
//   - ReadCheckpoint/WriteCheckpoint for Kafka's offset checkpoint files.
//   - Log dir failure (dir_failure.go, docs/log-dir-failure.md): a write
//     the file system refuses takes its whole dir offline (ErrLogDirFailed,
//     ManagerOptions.OnDirFailure); the other dirs keep serving.
//   - EpochCache (epoch.go): Kafka's LeaderEpochFileCache rules, the one
//     implementation; each log keeps one (leader-epoch-checkpoint) and
//     package replica decides truncation on copies of it.
//
// On disk (docs/replication-reference.md, "On-disk formats"): a partition dir
// `<topic>-<p>` holds segments named by their 20-digit base offset: `.log`
// (record batches exactly as produced, with baseOffset and
// partitionLeaderEpoch stamped), `.index` (sparse 8-byte relOffset/position
// entries, one per log.index.interval.bytes), `.timeindex` (12-byte
// timestamp/relOffset entries), `.snapshot` (the producer table as of that
// offset, Kafka's ProducerSnapshot layout; written at each roll and at
// close), `.txnindex` (the aborted transactions whose abort marker is in
// the segment, Kafka's TransactionIndex layout; created at the first),
// plus `leader-epoch-checkpoint` and `partition.metadata`.
//
// Invariants:
//   - Offsets strictly increase through a log; segments are ascending by
//     base offset and only the last (active) segment is written to.
//   - LogStartOffset <= every readable offset <= LogEndOffset; the
//     recovery point never exceeds the log end offset.
//   - A segment's .log ends on a batch boundary (appends are one write;
//     a failed write is truncated back, a torn tail is cut at recovery).
//   - Leader-epoch entries ascend in both epoch and start offset.
//   - Compaction keeps original offsets and never touches the active
//     segment.
//
// Verified against Kafka itself both ways: dumplog_test.go (build tag
// kafkatools) has Kafka's DumpLogSegments read our .log/.index/.timeindex
// and .txnindex files, and kafkafixture_test.go reads a segment Kafka 4.4 wrote
// (testdata/kafka-4.4) and checks that the indexes we rebuild from it are
// Kafka's, byte for byte.
//
// Deliberate differences from Kafka (kept simple on purpose):
//   - Compaction has no cleaner-offset-checkpoint or dirty-ratio
//     scheduling: every Maintain pass of a compacted log re-cleans all
//     non-active segments older than min.compaction.lag.ms, one cleaned
//     file per segment (no grouping). Tombstones go once their segment's
//     largest timestamp is older than delete.retention.ms (Kafka 3.x
//     stamps a KIP-534 delete horizon instead). Control batches are kept;
//     records of aborted transactions are dropped and nothing at or past
//     the last stable offset is cleaned, as in Kafka.
//   - Producer-state snapshots are written under the log's
//     lock at roll (no fsync) and close (fsynced), not in the background
//     (docs/producer-snapshots.md).
//   - No segment.jitter; leader-epoch truncations are written
//     synchronously (3.9 writes them asynchronously).
//   - Retention is bounded by the high watermark only once the replica
//     layer calls SetHighWatermark (HighWatermarkSetter).
//
// Locks: FileLog.mu (RWMutex) guards a log's segment list, its segments'
// in-memory state, the epoch cache and the producer table (so a leader's
// duplicate check and its append are one critical section). Appends and structural changes take
// it exclusively; Read takes it shared only to locate the bytes, and the
// returned ReadResult is written (sendfile / pread) without it. Order:
// FileLog.maintainMu → FileLog.flushMu → FileLog.mu. Manager.mu guards the
// partition map and the meta properties; it is never held while a log lock
// is taken except for Log.SetConfig in GetOrCreate (Manager.mu → FileLog.mu).
// Deleted segment files are unlinked at once and closed after
// segmentCloseDelay so in-flight ReadResults finish.
package logstore
