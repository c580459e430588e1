package controller

import (
	"errors"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// processLogDirEventNotification handles /log_dir_event_notification
// (LogDirEventNotificationZNode in ZkData.scala), the executor of
// decideLogDirEvents: a broker whose log directory failed asks for a
// LeaderAndIsr of every replica it hosts; the replicas in the failed
// directory answer KAFKA_STORAGE_ERROR and handleLeaderAndIsrResponse takes
// them offline. The nodes are deleted once read.
func (c *Controller) processLogDirEventNotification() error {
	names, err := c.childrenW(kafkazk.LogDirEventNotificationPath, ctlEvent{"LogDirEventNotification", c.processLogDirEventNotification})
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	var events []logDirEvent
	for _, n := range names {
		data, _, err := c.zk.Get(kafkazk.LogDirEventNotificationPath + "/" + n)
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return err
		}
		ev, err := kafkazk.DecodeLogDirEventZNode(data)
		if err != nil {
			c.log.Warn("ignoring log dir event", "node", n, "err", err)
			continue
		}
		events = append(events, logDirEvent{node: n, event: ev})
	}
	d := decideLogDirEvents(c.ctx, events)
	for _, n := range d.ignored {
		c.log.Warn("ignoring log dir event", "node", n)
	}
	for _, id := range d.brokers {
		c.log.Warn("log directory failure reported", "broker", id)
	}
	c.sendBatch(d.requests)
	return c.deleteChildren(kafkazk.LogDirEventNotificationPath, names)
}
