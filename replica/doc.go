// Package replica is partition replication on this broker: Partition, one
// hosted replica of a partition over a logstore.Log, as leader or follower,
// and the pure rules it applies (listed in state.go: the leader's view of
// its followers, ISR changes, HW advancement, epoch truncation and delayed
// operation verdicts, after Kafka 3.9 in ZooKeeper mode). The follower's
// fetching from its leader is package replica/fetcher.
//
// API: New and NewLeader build a Partition; BecomeLeader, BecomeFollower
// and Stop apply the controller's LeaderAndIsr and StopReplica. As leader:
// CheckProduce and AppendAsLeader append a produce request's validated
// batches, ProduceWait tells an acks=-1 produce whether the HW passed it,
// Read serves consumers below the HW, ReadForFollower serves a follower's
// fetch (with KIP-320's last-fetched-epoch check) and records its progress,
// which moves the HW and may expand the ISR; MaybeShrinkIsr is the ISR
// expiration check; ISR changes are written through an IsrWriter;
// EndOffsetForEpoch answers OffsetForLeaderEpoch; CheckLeaderEpoch applies
// KIP-320's current_leader_epoch rule; DeleteRecordsBefore moves the log
// start offset (never past the HW). As follower (the fetcher's view):
// AppendAsFollower, SetLeaderHighWatermark, TruncateTo and
// TruncateFullyAndStartAt. Changed returns a channel closed on the next
// change and Watch pokes a channel at every change, for waits on one or on
// many partitions; Attached holds per-partition state of the layers above
// (the data path's producer table), so that it lives and dies with the
// partition.
//
// Invariants: HW <= LEO; the HW never moves backwards on a leader; leader
// epochs never decrease; the leader stays in its ISR. LeaderState keeps
// them (checkLeaderInvariants in its tests).
//
// Locks: Partition.mu guards the partition's leader and follower state and
// is never held while waiting; the log has its own lock and is called with
// mu held only for appends, which keeps HW updates ordered with appends.
// The ISR znode write happens outside mu. The server's per-partition append
// lock (in the attached state) is taken before mu.
package replica
