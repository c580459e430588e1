// Package controllertest is test support for the controller's tests and
// for the broker side's: RecordingChannel, a BrokerChannel that records
// every request and answers success, and views of the recorded
// LeaderAndIsr, UpdateMetadata and StopReplica requests for assertions.
// Only tests import it.
package controllertest
