// Package replica is partition replication on this broker: Partition, one
// hosted replica of a partition over a logstore.Log, as leader or follower,
// and the pure rules it applies (listed in state.go: the leader's view of
// its followers, ISR changes, HW advancement, epoch truncation and delayed
// operation verdicts, after Kafka 3.9 in ZooKeeper mode). The follower's
// fetching from its leader is package replica/fetcher.
//
// API: New and NewLeader build a Partition; BecomeLeader, BecomeFollower
// and Stop apply the controller's LeaderAndIsr and StopReplica. As leader:
// AppendAsLeader is the whole write of a produce request's validated
// batches — leadership and min.insync.replicas checks, then the log's
// producer-state check, append and update — under one lock;
// AppendRules.Origin tells the log a coordinator's batches from a client's;
// AppendMarkerAsLeader writes a transaction marker under the same checks;
// ProduceWaitState is what an acks=-1 produce's verdict reads,
// Read serves consumers below the HW, ReadIsolated read_committed ones
// below the last stable offset with the aborted transactions they need
// (docs/transactions-log.md), FetchWaitOffsets bounds a waiting fetch by
// its isolation, ReadForFollower serves a follower's
// fetch (with KIP-320's last-fetched-epoch check) and records its progress,
// which moves the HW and may expand the ISR; MaybeShrinkIsr is the ISR
// expiration check; ISR changes are written through an IsrWriter;
// EndOffsetForEpoch answers OffsetForLeaderEpoch; CheckLeaderEpoch applies
// KIP-320's current_leader_epoch rule; DeleteRecordsBefore moves the log
// start offset (never past the HW). As follower (the fetcher's view):
// AppendAsFollower, SetLeaderHighWatermark, TruncateTo and
// TruncateFullyAndStartAt. After an append, a high-watermark move, a
// leadership or an ISR change a Partition has Options.Delayed (the
// broker's purgatory) check the acks=-1 produces and long-polling fetches
// waiting on it, whose verdicts (DelayedProduce, DelayedFetch) are pure
// functions here. Producer state is the log's: every append, as leader or
// follower, updates it, so a follower that becomes leader already knows
// every producer.
//
// Invariants: HW <= LEO; the HW never moves backwards on a leader; leader
// epochs never decrease; the leader stays in its ISR. LeaderState keeps
// them (checkLeaderInvariants in its tests).
//
// Locks: Partition.mu guards the partition's leader and follower state and
// is never held while waiting; the log has its own lock and is called with
// mu held only for appends, which keeps HW updates ordered with appends and
// the min-ISR check atomic with the append (Partition.mu → the log's lock).
// The ISR znode write happens outside mu. Delayed operations are checked
// only after mu is released (their checks take mu), never under it.
package replica
