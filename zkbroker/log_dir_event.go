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
