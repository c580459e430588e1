// Package audit is the online replica audit (docs/replica-audit.md): a
// follower comparing, below both high watermarks, the batches of its
// replicas with their leaders', which Kafka never does.
//
// API: Compare (pure) judges two lists of batch headers (Headers reads
// them from fetched or local bytes) over an offset range; New returns an
// Auditor whose Run makes a pass every Config.Interval over the Targets
// its caller lists (server/replica_audit.go: the partitions the fetchers
// hold in step, compacted topics left out), reading each leader with an
// ordinary consumer Fetch (FetchRequest) and the local log, paced by
// Config.MaxBytesPerSec; Divergent and the kbroker_replica_audit_* metrics
// report what it found. CrossCheck is the same comparison over every
// replica of a partition, for the `kbroker audit` CLI.
//
// Invariants: a mismatch is confirmed only by a second read after
// Config.RecheckDelay in the same leader epoch; nothing the audit sends
// changes a leader's state (a consumer's fetch, no session); one goroutine
// runs the passes and owns the connections.
package audit
