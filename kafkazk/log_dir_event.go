package kafkazk

import "github.com/kbroker/kbroker/zkstore"

// WriteLogDirEventNotification creates one persistent sequential
// /log_dir_event_notification/log_dir_event_ node saying that broker's log
// directory failed; the controller answers with a LeaderAndIsr of every
// replica the broker hosts (docs/log-dir-failure.md).
func WriteLogDirEventNotification(zk zkstore.Client, broker int32) error {
	_, err := zk.Create(LogDirEventNotificationPath+"/"+LogDirEventPrefix, LogDirEventZNode{Broker: broker, Event: LogDirFailureEvent}.Encode(), zkstore.ModePersistentSequential)
	return err
}
