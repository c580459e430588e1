// Package zkbroker is one broker's part in cluster mode: what a Kafka 3.9
// broker does in ZooKeeper, apart from the controller. The metadata store
// is ZooKeeper (Config.ZooKeeperConnect) or, for a standalone broker, a
// zkstore.LocalStore (Config.Store): the same code runs on both.
//
// Public API: New(Config, logger) and (*Node).Run(ctx) join the cluster.
// Run's member loop (member.go) creates the top-level paths and the
// cluster id, registers the broker, takes part in the controller election
// and does both again for every new session and every /controller
// deletion. A registration left by this broker's previous run is closed at
// start with the session credentials kept in the first log dir
// (session_file.go), or waited out for up to twice the session timeout;
// while this broker wins, Node runs a controller.Controller
// (node.go) and stops it when the tenure ends. Queries: ControllerID,
// IsController, ControllerEpoch, ClusterID, BrokerEpoch. Controller-only
// operations (others answer NOT_CONTROLLER): CreateTopic, DeleteTopic,
// CreatePartitions (node_admin.go, writing through kafkazk),
// ControlledShutdown, ElectLeaders, AlterPartitionReassignments,
// ListPartitionReassignments (handed to the controller's event loop). Any
// broker: SetTopicConfig (node_admin.go), TopicConfigs and
// AutoCreateTopic (node_topic_configs.go), ClaimProducerIDBlock (node_producer_ids.go),
// WatchTopicConfigChanges (node_config_watch.go), and for partition
// leaders UpdateIsr (the conditional ISR write, kafkazk.ErrIsrVersionConflict
// on a lost race) and RecordIsrChange, which feeds the
// isr-change-propagation task (isr_propagation.go). Errors carry Kafka
// codes (kafkazk.KafkaError); ErrNotConnected means Run is not running.
//
// Locks: Node.mu guards the Node's status fields and is never held across
// a ZooKeeper call or while waiting for the controller's event loop. The
// isrChangePropagator's mu guards its set. zkMember has no locks: its
// state lives on run's goroutine and its callbacks are called there.
package zkbroker
