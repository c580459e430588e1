// Package server turns decoded Kafka requests into answers: one file per
// API (named NN_api_name.go after its key), the topic table, the wiring
// of the group coordinator (group_wiring.go) and of the transaction
// coordinator (txn_*.go: its log, markers and KIP-890 verification between
// brokers), and the producer-id allocator (each partition's producer state
// is its log's, in logstore).
//
// API: New builds a Broker from a config; Broker.Run serves the listeners
// until its context ends, then shuts down cleanly (controlled shutdown,
// then flushes logs and writes the clean-shutdown marker).
// Broker implements protocol.Handler.
//
// Every broker runs the cluster path; a broker without zookeeper.connect
// is a cluster of one whose metadata store is a zkstore.LocalStore in
// its first log dir (local_store.go), which is the only place the two
// differ. The cluster side is a zkbroker.Node (cluster*.go): the topic
// table is rebuilt from the controller's UpdateMetadata, hosted replicas
// (replica.Manager) come and go with LeaderAndIsr and StopReplica, and
// admin operations go through the Node. The controller reaches its own
// broker in-process (selfRequest). No handler file asks which store is in
// use; mode_fork_lint_test.go keeps it so.
//
// Registration: every handler file calls register in an init function with
// its API key and the version range it serves; that table is the only
// source of truth for dispatch and for the ApiVersions answer.
//
// Locks: Broker.mu guards writes of the topic table (readers load the
// snapshot). clusterState.mu guards the metadata cache and fences
// controller requests; the replica manager's lock guards the hosted
// replicas. Order: clusterState.mu, the replica manager's, Broker.mu,
// then a partition's. None is held while waiting for the controller.
// Broker.aclMu makes each read or write of the stored ACLs one step with
// the authorizer cache's update from it; it is taken alone, around
// metadata store calls only.
package server
