// Package server turns decoded Kafka requests into answers: one file per
// API (named NN_api_name.go after its key), the topic table, the group
// coordinator wiring and producer state.
//
// API: New builds a Broker from a config; Broker.Run serves the listeners
// until its context ends, then shuts down cleanly (flushes logs, writes the
// clean-shutdown marker). Broker implements protocol.Handler.
//
// Registration: every handler file calls register in an init function with
// its API key and the version range it serves; that table is the only
// source of truth for dispatch and for the ApiVersions answer.
//
// Locks: Broker.mu guards the topic table (topics, topicsByID). It is never
// held while calling into a partition, the log store or the group
// coordinator. Topic creation and deletion are serialised by Broker.adminMu,
// which is taken before mu.
package server
