// Package group is kbroker's classic consumer-group coordinator (Kafka's
// GroupCoordinator and GroupMetadataManager, ZooKeeper-mode 3.9 behaviour).
//
// # API
//
// New builds a Coordinator over an OffsetsLog (the __consumer_offsets
// partitions), a Clock and a logger. The broker calls LoadPartition /
// UnloadPartition as it gains and loses leadership of __consumer_offsets
// partitions, and PartitionFor to answer FindCoordinator. The API handlers
// are thin wrappers around one method per Kafka API, each taking the decoded
// kmsg request (its Version set) and returning the response of the same
// version: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
// TxnOffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups,
// OffsetDelete.
// JoinGroup and SyncGroup block until the rebalance step completes, so
// handlers call them from protocol.Response.Wait. Handlers pass the request
// header's client id and the peer host with WithClientInfo. OffsetCommit
// and OffsetFetch address topics by name: handlers serve them up to v9
// (v10 names topics by id). Close stops all timers; ExpireOffsets is the
// periodic retention pass, also callable directly.
//
// # Transactional offset commits
//
// TxnOffsetCommit (KIP-98, KIP-447) writes the offsets with
// OffsetsLog.AppendTransactional, a transactional batch of the producer,
// and keeps them per producer id in the group's pendingTxn: OffsetFetch
// does not return them, and with requireStable (v7+) answers
// UNSTABLE_OFFSET_COMMIT for their partitions. The broker appends the
// transaction's marker to the group's partition (WriteTxnMarkers) and then
// calls CompleteTransaction: a commit moves the producer's pending offsets
// of every group on that partition into the committed ones, each only if
// its record is later in the log than the committed offset's (a plain
// commit written after it wins, Kafka's completePendingTxnOffsetCommit); an
// abort drops them. Replay hands over batches with their producer id,
// transactional bit and markers, and the load applies the same rules
// (Kafka's loadGroupsAndOffsets), so a reloaded coordinator ends where the
// running one was. Markers reported while a partition loads are applied,
// in order, before it serves requests. Config.VerifyTransaction is the
// KIP-890 seam: it is asked, without a group lock, before the commit is
// written. Pending offsets neither expire nor let an Empty group be
// removed; OffsetDelete and DeleteGroups drop those of the partitions they
// delete (Kafka's removeOffsets). Each offset carries the base offset of
// the batch that wrote it, which OffsetsLog's appends return.
//
// Clock, Timer and RealClock are internal/clock's, shared with the
// transaction coordinator. The tests' clock, clocktest.Fake, fires due
// timers inside Advance, so timeouts are tested without sleeping, and their
// MemOffsetsLog (memlog_test.go) is an in-memory OffsetsLog. PartitionFor is
// coordpartition.For over offsets.topic.num.partitions.
//
// # Invariants
//
//   - A commit or a rebalance is acknowledged only after OffsetsLog.Append
//     returned; in-memory state changes only when the append succeeded, so
//     what clients were told is what a reloading coordinator replays.
//   - CompleteTransaction ends everything pending for the producer on the
//     partition, so the broker calls it before it answers
//     WriteTxnMarkers: the producer's next transaction cannot have
//     committed offsets yet.
//   - Records use Kafka 3.9's schemas and versions (offset commit key v1,
//     value v3, or v1 with an expire timestamp; group metadata key v2,
//     value v3), so __consumer_offsets stays readable by Kafka's tools.
//   - Generation ids only grow, including across restarts: an empty
//     generation is persisted too.
//   - Every timer belongs to a group or a member and is stopped when it is
//     replaced, the member leaves, or the group dies; a timer that fires
//     late checks that it is still the current one.
//
// # Locks
//
// Lock order: group.mu before Coordinator.mu. Coordinator.mu guards the
// partition and group maps (with, per partition, the groups each producer
// has pending offsets in and the markers deferred while loading) and is
// held only briefly; group.mu guards
// everything about one group and is held across OffsetsLog.Append, so the
// order of records in the log is the order of changes in memory. Timer
// callbacks take group.mu themselves. Blocked JoinGroup/SyncGroup calls wait
// on a member's buffered channel with no lock held.
package group
