// Package throttle is Kafka's replication quotas (KIP-73): a byte rate
// measured as Kafka's Rate over sampled windows, and the partitions it
// throttles. A leader leaves the records of a throttled partition out of a
// follower's fetch while the follower is out of the ISR and the leader's
// rate is over leader.replication.throttled.rate; a follower leaves such a
// partition out of its fetch while it is not caught up and its rate is
// over follower.replication.throttled.rate. Both record the bytes of
// throttled partitions they move. Caught-up replicas are never held back,
// so a throttle slows a reassignment or a rebuild, never the ISR.
//
// Quota is safe for concurrent use; its methods take the time, so the
// rules are tested with a manual clock. Sources: Kafka's
// ReplicationQuotaManager.scala, the common metrics' SampledStat and Rate
// (docs/replication-quotas.md).
package throttle
