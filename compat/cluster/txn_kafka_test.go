//go:build kafkaref

package cluster

import (
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// The transaction tests against Apache Kafka (KRaft, the jars in
// compat/lib), to validate their logic rather than kbroker:
//
//	go test -tags kafkaref -run 'OnKafka' -v ./compat/cluster/
//
// Not part of make compat-cluster: three JVMs take most of a small machine.

// The copy without faults on one Kafka node.
func TestTxnCopyOnKafka(t *testing.T) {
	c := harness.StartKafkaCluster(t, 1)
	runTxnChaos(t, kafkaChaosCluster(t, c), 0)
}

// TestTxnChaosCopyExactlyOnce's faults on three Kafka nodes.
func TestTxnChaosOnKafka(t *testing.T) {
	begin := time.Now()
	c := harness.StartKafkaCluster(t, 3, txnChaosSettings...)
	runTxnChaos(t, kafkaChaosCluster(t, c), 6)
	t.Logf("whole test %v", time.Since(begin).Round(time.Millisecond))
}

// kafkaChaosCluster restarts a SIGKILLed node at once: a KRaft broker
// that registers again replaces its old registration, no session to wait
// out. The active controller is not reported (-1).
func kafkaChaosCluster(t *testing.T, c *harness.Cluster) txnChaosCluster {
	return txnChaosCluster{
		c: c,
		killAndRestart: func(id int32) {
			b := c.Broker(id)
			b.Kill()
			c.Restart(t, b)
		},
		controller: func() int32 { return -1 },
	}
}
