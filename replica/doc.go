// Package replica holds partition state: the leader's view of a partition
// (log, leader epoch, high watermark) and, with replication, followers,
// ISR and delayed operations.
//
// API: Partition wraps one logstore.Log. AppendAsLeader appends a produce
// request's validated batches; Read serves consumers below the high
// watermark; Changed returns a channel closed on the next change, which
// acks=-1 produces wait on, and Watch pokes a channel at every change, for
// long-polling fetches that wait on many partitions; CheckLeaderEpoch
// applies KIP-320's current_leader_epoch rule; DeleteRecordsBefore moves
// the log start offset (never past the HW); Attached holds per-partition
// state of the layers above (the data path's producer table), so that it
// lives and dies with the partition.
//
// Invariants: HW <= LEO; the HW never moves backwards on a leader; leader
// epochs never decrease. LeaderState.MaybeIncrementHighWatermark keeps the
// first two.
//
// Locks: Partition.mu guards the partition's leader state and is never held
// while waiting; the log has its own lock and is called with mu held only
// for appends, which keeps HW updates ordered with appends. The server's
// per-partition append lock (in the attached state) is taken before mu.
package replica
