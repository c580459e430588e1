// Package fetcher is the follower side of replication: Kafka's
// ReplicaFetcherManager and ReplicaFetcherThread
// (docs/replication-reference.md, "Follower: fetching and truncation"). It
// keeps the local follower replicas of this broker in step with their
// leaders, with all network IO here; the decisions (where to start, where to
// truncate) come from the pure state machine in package replica.
//
// API: NewManager(cfg, dialer, logger) returns a Manager.
// AddPartitions(leader, parts...) starts following (LeaderAndIsr "become
// follower"); RemovePartitions(tps...) stops (become leader, StopReplica);
// Close stops everything. Partition is what a follower replica must offer
// (the broker implements it on replica.Partition); Dialer/Conn send
// kmsg requests to a leader, KgoDialer over a franz-go client. MaxLag and
// the kafka_server_replicafetchermanager_maxlag{clientId="Replica"} gauge
// report the largest leader HW - fetch offset, and
// kafka_server_fetcherlagmetrics_consumerlag{clientId,topic,partition}
// each followed partition's.
//
// Per leader there are NumReplicaFetchers fetchers, each a goroutine with
// one connection; a partition goes to FetcherID(topic, partition, n), as in
// Kafka. A fetcher's round: partitions in the truncating phase ask
// OffsetForLeaderEpoch v4 about their latest epoch and truncate
// (replica.OffsetTruncation, repeated while not Completed, KIP-279; an
// empty epoch cache truncates to the HW instead); then one Fetch for every
// fetching partition, carrying LEO, log start, current and last fetched
// epochs; the leader's batches are appended unchanged and the follower HW
// set from the leader's. A DivergingEpoch answer truncates and refetches;
// OFFSET_OUT_OF_RANGE asks ListOffsets;
// FENCED_LEADER_EPOCH in the current epoch parks the partition until it is
// re-added or its leader epoch moves; other partition errors and failed
// requests back off ReplicaFetchBackoff.
//
// Invariants: a partition is in at most one fetcher; while it is, that
// fetcher is the only writer of its log; the fetch offset equals the LEO
// in the fetching phase; an answer is applied only to the partition state
// it was requested for (same state object, offset and leader epoch).
//
// Locks, in order: Manager.mu, then fetcher.mu, then whatever the
// Partition takes inside. Manager.mu guards the fetcher map and partition
// ownership and is held while a fetcher stops (waiting for its goroutine).
// fetcher.mu guards the fetcher's partition states and is held while an
// answer is applied to the logs, never during network IO, so
// RemovePartitions returns only after any write to the removed partitions
// has ended. A fetcher's connection belongs to its goroutine alone.
package fetcher
