// Package controller is kbroker's cluster mode in ZooKeeper, as Apache Kafka
// 3.9 does it in ZooKeeper mode: broker registration, controller election
// and the controller's decisions. docs/replication-reference.md names the
// Kafka source files each rule comes from ("ZooKeeper znodes",
// "Controller").
//
// Public API (ctl_node.go, ctl_admin.go, ctl_isr_propagation.go): New(Config,
// logger) and (*Node).Run(ctx) join the cluster — register the broker, run
// the election and, while this broker is controller, the controller.
// Queries: ControllerID, IsController, ControllerEpoch, ClusterID,
// BrokerEpoch. Controller-only operations (others answer NOT_CONTROLLER):
// CreateTopic, DeleteTopic, CreatePartitions, ControlledShutdown,
// ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments.
// Any broker: SetTopicConfig, and for partition leaders UpdateIsr (the
// conditional ISR write, ErrIsrVersionConflict on a lost race) and
// RecordIsrChange (feeds the isr-change-propagation task). Errors carry
// Kafka codes: errors.Is(err, kerr.X), errors.As(err, *KafkaError) for the
// message. Controller requests leave through BrokerChannel (Config), by
// default a franz-go client pinned to each broker's inter-broker endpoint.
// Gauges: kafka_controller_kafkacontroller_{activecontrollercount,
// controllerepoch,globalpartitioncount,globaltopiccount,
// offlinepartitionscount} (Config.Registerer).
//
// The controller (ctl_*.go) is Kafka 3.9's ZooKeeper controller with the
// leader-written ISR of IBP ≤ 2.7-IV1: kafkaController is one tenure (one
// controller epoch) running a single event loop (ctl_loop.go) over
// ZooKeeper watches, broker responses, admin calls and ticks. Failover
// (ctl_failover.go), broker change (ctl_broker_change.go), topic and
// partition creation (ctl_topic_change.go), ISR change notifications
// (ctl_isr_change.go), deletion (ctl_delete.go), controlled shutdown,
// elections and rebalance, reassignment (KIP-455), topic config changes
// (unclean election turned on) and log-dir failures each have a file; the
// partition and replica state machines (ctl_partition_sm.go,
// ctl_replica_sm.go) do the read–decide–conditional-write loop of Kafka's
// PartitionStateMachine;
// requestBatch (ctl_requests.go) builds LeaderAndIsr v7, UpdateMetadata v8
// and StopReplica v4 with kmsg; channelManager (ctl_channel.go) keeps one
// ordered queue per broker and retries until the broker goes away. Unit
// tests drive the loop with runUntilIdle over the fake ZooKeeper and a
// synchronous recording channel, so their histories are deterministic.
//
// Foundations:
//
//   - zkClient (zk.go): the ZooKeeper operations we use — Create in the four
//     modes, Get/Exists/Children with one-shot watches, versioned Set and
//     Delete, atomic Multi, session state. zkConn (zk_conn.go) implements it
//     over github.com/go-zookeeper/zk, honouring a zookeeper.connect chroot;
//     memZK (zk_fake*.go) is an in-memory ensemble for unit tests. Both pass
//     the suite in zk_suite_test.go; set KBROKER_TEST_ZK=host:port to run it
//     (and every ZooKeeper-backed test) against a real server too, or
//     KBROKER_TEST_ZK=start to have the tests start one with scripts/zk.sh.
//   - Znode payloads (znodes*.go, znode_json.go, znode_paths.go): every
//     znode Kafka writes, with encode (Kafka's bytes, field order as Kafka
//     writes it) and a lenient decode (Kafka's required keys only).
//   - assignReplicasToBrokers (assign.go): Kafka's replica assignment,
//     rack-unaware and rack-aware, with an injectable random source.
//   - Leader election (election.go): the four strategies of Election.scala,
//     the initial leader of a new partition and the controller's ISR removal,
//     as pure functions of (assignment, current state, liveness).
//   - Registration and election (registration.go, controller_election.go,
//     member.go): top-level paths, /cluster/id, the ephemeral broker
//     registration, one controller election attempt, writes fenced by the
//     /controller_epoch version, and zkMember.run, the loop that registers
//     and elects again for every session and every /controller deletion.
//
// Invariants:
//   - Only the event goroutine touches a kafkaController's context and
//     watches; everything else enqueues. Every decision re-reads the state
//     znodes it writes and writes them conditionally on the version read.
//   - Per broker, requests leave in the order decided: within one decision
//     LeaderAndIsr, then UpdateMetadata, then StopReplica; the live-broker
//     UpdateMetadata of failover and broker start-up precedes them.
//   - Leader recovery (KIP-704) is not used: with leader-written ISRs no
//     one would clear RECOVERING, so an unclean leader is written RECOVERED.
//   - Every controller write goes through controllerWrite, which checks the
//     /controller_epoch version the controller was elected at; a failed
//     check is errControllerMoved and the controller must resign. So a
//     controller from an older epoch can never change ZooKeeper.
//   - Each /controller_epoch value is won by exactly one broker: the create
//     of /controller and the conditional bump are one multi.
//   - Every leadership decision bumps the leader epoch by exactly one; an
//     ISR written to ZooKeeper is never empty.
//   - Decisions take no clock: timestamps written into znodes come from an
//     injected nowMs, randomness from an injected intn.
//
// Locks: Node.mu guards the Node's status fields and is never held across
// ZooKeeper calls or while waiting for the event loop. kafkaController.mu
// guards only its event queue. channelManager.mu guards its queue map, each
// brokerQueue.mu its pending list; neither is held while sending. The
// isrChangePropagator's mu guards its set. No lock is taken while holding
// another. memZK.mu guards the fake's whole tree, sessions and watches;
// watch channels are buffered so firing under it never blocks. zkConn.mu
// guards only the session state that go-zookeeper's callback updates; it is
// never held across a ZooKeeper call. zkMember has no locks: its state lives
// on run's goroutine and its callbacks are called there.
package controller
