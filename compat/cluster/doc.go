// Package cluster holds the cluster-mode integration tests: a private
// ZooKeeper (scripts/zk.sh) and several kbroker processes started by
// compat/harness, driven with franz-go and the stock Kafka tools, with
// assertions on what a user or an operator sees: records read back, error
// codes, Metadata from every broker, and the znodes Kafka writes
// (ZkData.scala).
//
// API surface: none; the package is its tests (`make compat-cluster`).
// Files with the build tag kafkaref run a test's client logic against
// Apache Kafka instead (`go test -tags kafkaref -run OnKafka`), to show the
// test itself is right; they are not part of make compat-cluster.
// TestSecureCluster (security_cluster_test.go) runs with
// KBROKER_ORACLE=kafka39 against three Apache Kafka 3.9.1 brokers instead.
// The helpers in helpers_test.go read znodes (go-zookeeper directly),
// poll bounded conditions and decode `kafka-topics --describe`.
// The network-fault tests (net_faults_test.go, TestNet*) run ZooKeeper
// and each broker in its own network namespace (harness.StartNetCluster)
// and inject silent partitions, packet loss and rate limits with iptables
// and tbf; they need root. This kernel has no sch_netem, so no test adds
// delay, jitter or reordering.
//
// Invariants: every test starts its own ZooKeeper and brokers and ends only
// those, by their own handles; every wait has a deadline. Replication tests
// use short timeouts (zookeeper.session.timeout.ms and
// replica.lag.time.max.ms of 6 s) so failures show within seconds.
//
// Locks: none shared; a test's producer goroutines report through channels
// or a mutex local to that test.
package cluster
