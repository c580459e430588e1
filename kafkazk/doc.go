// Package kafkazk is Kafka's metadata as znodes, and the reads and writes
// on them that both sides of cluster mode make: the broker side (zkbroker)
// and the controller (controller). It plays the part of Kafka 3.9's
// KafkaZkClient and AdminZkClient; docs/replication-reference.md names the
// Kafka source files each rule comes from ("ZooKeeper znodes").
//
//   - Znode paths and payloads (znode_paths.go, znodes*.go, znode_json.go):
//     every znode Kafka writes, with encode (Kafka's bytes, field order as
//     Kafka writes it) and a lenient decode (Kafka's required keys only).
//   - Registration (registration.go): the top-level paths, /cluster/id and
//     the ephemeral /brokers/ids/<id>, whose czxid is the broker epoch.
//   - Controller election (controller_election.go): one election attempt
//     (ElectController), ControllerWrite — every controller write, fenced by
//     the /controller_epoch version it was elected at — and resignation.
//   - A leader's ISR write (isr_writes.go): UpdateIsr, the conditional
//     partition-state write, and the isr_change notification.
//   - Admin writes (admin_writes.go): topic creation, partition creation,
//     deletion marks and topic configs with their change notifications,
//     with Kafka's validation and messages; replica assignment (assign.go),
//     rack-unaware and rack-aware, with an injectable random source.
//   - Seed (store_seed.go): a standalone broker's earlier state written into
//     a fresh LocalStore as a one-broker cluster's znodes.
//
// Errors carry Kafka codes: errors.Is(err, kerr.X) matches a *KafkaError's
// code, errors.As gives its message.
//
// Invariants: an ISR written to ZooKeeper is never empty; each
// /controller_epoch value is won by exactly one broker, because the create
// of /controller and the conditional bump are one multi; a controller
// from an older epoch can never change ZooKeeper, because ControllerWrite
// prefixes its ops with a check of the epoch's version.
//
// Nothing here keeps state or starts goroutines: every function takes the
// zkstore.Client to use; randomness and topic ids are passed in, with
// RandIntn and NewTopicID as the defaults.
package kafkazk
