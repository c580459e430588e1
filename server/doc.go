// Package server turns decoded Kafka requests into answers: one file per
// API (named NN_api_name.go after its key), the topic table, the group
// coordinator wiring and producer state.
//
// API: New builds a Broker from a config; Broker.Run serves the listeners
// until its context ends, then shuts down cleanly (controlled shutdown in
// cluster mode, then flushes logs and writes the clean-shutdown marker).
// Broker implements protocol.Handler.
//
// Standalone (zookeeper.connect unset) the broker keeps its topic table in
// a file in the first log dir and leads every partition. In cluster mode
// (cluster*.go) the ZooKeeper side is a controller.Node; the topic table is
// rebuilt from the controller's UpdateMetadata, hosted replicas come and go
// with LeaderAndIsr and StopReplica, followers are fed by the fetcher
// manager (replica/fetcher), and admin operations go through the Node.
//
// Registration: every handler file calls register in an init function with
// its API key and the version range it serves; that table is the only
// source of truth for dispatch and for the ApiVersions answer.
//
// Locks: Broker.mu guards the topic table (topics, topicsByID). It is never
// held while calling into a partition, the log store or the group
// coordinator. Topic creation and deletion are serialised by Broker.adminMu,
// which is taken before mu. In cluster mode clusterState.mu guards the
// metadata cache and the hosted replicas; order: adminMu, clusterState.mu,
// mu. Partition locks are taken after all of them.
package server
