package harness

import "testing"

// StartKafkaCluster starts n Apache Kafka nodes from the jars in
// compat/lib, each a KRaft broker and controller in one process (node.id
// 1..n, a static quorum of all n), whatever KBROKER_APACHE_KAFKA says: for
// tests that check their own client logic against Kafka itself. It
// returns a Cluster whose ZK is nil; Restart, WaitReady and MetadataFrom
// work as for kbroker, Broker.Kill and Term signal the node's JVM by its
// pid. Overrides (key=value) apply to every node.
func StartKafkaCluster(t testing.TB, n int, overrides ...string) *Cluster {
	t.Helper()
	c := &Cluster{Brokers: newApacheCluster(t, n, min(n, 3), func(int32) []string { return overrides })}
	startTogether(t, c.Brokers)
	c.WaitReady(t)
	return c
}

// startTogether launches every node before waiting for any: a KRaft node
// is ready only once a quorum of controllers is up.
func startTogether(t testing.TB, brokers []*ClusterBroker) {
	t.Helper()
	for _, b := range brokers {
		b.launch(t)
	}
	for _, b := range brokers {
		b.waitStarted(t)
	}
}
