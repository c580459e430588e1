package controller

import (
	"errors"
	"slices"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// processLogDirEventNotification handles /log_dir_event_notification
// (LogDirEventNotificationZNode in ZkData.scala): a broker whose log
// directory failed asks for a LeaderAndIsr of every replica it hosts; the
// replicas in the failed directory answer KAFKA_STORAGE_ERROR and
// handleLeaderAndIsrResponse takes them offline. The nodes are deleted once
// read.
func (c *Controller) processLogDirEventNotification() error {
	names, err := c.childrenW(kafkazk.LogDirEventNotificationPath, ctlEvent{"LogDirEventNotification", c.processLogDirEventNotification})
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	var brokers []int32
	for _, n := range names {
		data, _, err := c.zk.Get(kafkazk.LogDirEventNotificationPath + "/" + n)
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		ev, err := kafkazk.DecodeLogDirEventZNode(data)
		if err != nil || ev.Event != kafkazk.LogDirFailureEvent {
			c.log.Warn("ignoring log dir event", "node", n, "err", err)
			continue
		}
		if !slices.Contains(brokers, ev.Broker) {
			brokers = append(brokers, ev.Broker)
		}
	}
	slices.Sort(brokers)
	b := newRequestBatch(c.ctx)
	for _, id := range brokers {
		if c.ctx.isLive(id) {
			c.log.Warn("log directory failure reported", "broker", id)
			c.replicasOnline(b, id, c.ctx.partitionsOnBroker(id))
		}
	}
	c.sendBatch(b)
	return c.deleteChildren(kafkazk.LogDirEventNotificationPath, names)
}
