package zkbroker

import "github.com/kbroker/kbroker/kafkazk"

// WriteLogDirEvent tells the controller that one of this broker's log
// directories failed (Kafka's KafkaZkClient.propagateLogDirEvent).
func (n *Node) WriteLogDirEvent() error {
	zk, err := n.client()
	if err != nil {
		return err
	}
	return kafkazk.WriteLogDirEventNotification(zk, n.cfg.BrokerID)
}

// CloseSession ends this broker's ZooKeeper session at once, so that the
// controller sees the broker gone without waiting for the session to
// expire. It is for a broker about to exit that can no longer serve (every
// log dir failed); the ephemeral registration goes with the session.
func (n *Node) CloseSession() {
	if zk, err := n.client(); err == nil {
		zk.Close()
	}
}
