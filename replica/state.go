package replica

// The replication state machine (issue 4), pure: no goroutines, sockets,
// files, ZooKeeper or clock. Inputs are fetch positions, LeaderAndIsr
// decisions, appends' end offsets and a `now` argument; outputs are return
// values (HW moved, ISR change to write, truncation offset, delayed operation
// verdicts). Rules follow Kafka 3.9 in ZooKeeper mode; each file's comments
// say the rule and why, and docs/replication-reference.md names the Kafka
// source file or KIP each rule comes from.
//
//   - LeaderState (state_leader.go, state_fetch.go, isr.go): leader-side
//     bookkeeping per follower, HW advancement, ISR shrink/expand
//     and the conditional-write protocol for leader-made ISR changes
//     (Partition.scala), min.insync.replicas gates.
//   - FollowerState (state_follower.go): the follower's HW and where
//     it starts fetching.
//   - The epoch cache is the log's (logstore.EpochCache);
//     OffsetTruncation and CheckLastFetchedEpoch (epoch_truncation.go):
//     both sides of KIP-101/KIP-279 truncation and Fetch v12 divergence
//     (KIP-320).
//   - IsrChangePropagation (isr_propagation.go): the 2.5 s / 5 s / 60 s
//     isr_change_notification rule.
//   - DelayedProduce and DelayedFetch (purgatory_*.go): completion
//     verdicts.
//
// Locks: none inside. The owner (Partition) serialises every call on one
// partition's state under its own mutex and does the IO outside it, or, for
// the ISR znode write, between propose and Complete/FailIsrChange, during
// which the state refuses a second change.
//
// Invariants: HW <= LEO; a leader's HW never decreases; the leader stays in
// its ISR; leader epochs never decrease; epoch cache entries ascend in both
// epoch and start offset; at most one ISR change in flight.
