// Package controller is the cluster's controller, Kafka 3.9's ZooKeeper
// controller with the leader-written ISR of IBP ≤ 2.7-IV1.
// docs/replication-reference.md names the Kafka source files each rule
// comes from ("Controller"). The broker that wins the election
// (zkbroker.Node) runs one; the znodes it reads and writes are kafkazk's,
// over a zkstore.Client.
//
// Public API: New(client, Config, kafkazk.ControllerStatus, BrokerChannel,
// …) makes a Controller for one tenure (one controller epoch); Run(ctx)
// runs it until ctx ends or the tenure does (kafkazk.ErrControllerMoved,
// ErrSessionLost, a ZooKeeper error). The broker's controller-only admin
// operations — ControlledShutdown, ElectLeaders,
// AlterPartitionReassignments, ListPartitionReassignments,
// CheckLeaderImbalance — run on its event loop (ctl_api.go). Requests to
// brokers leave through a BrokerChannel; OpenBrokerChannel gives the
// default, a franz-go client pinned to each broker's inter-broker
// endpoint, with the controller's own broker reached in-process. Gauges
// (NewMetrics): kafka_controller_kafkacontroller_{activecontrollercount,
// controllerepoch,globalpartitioncount,globaltopiccount,
// offlinepartitionscount,preferredreplicaimbalancecount}.
//
// A Controller runs a single event loop (ctl_loop.go) over ZooKeeper
// watches, broker responses, admin calls and ticks. Failover
// (ctl_failover.go), broker change (ctl_broker_change.go), topic and
// partition creation (ctl_topic_change.go), ISR change notifications
// (ctl_isr_change.go), deletion (ctl_delete.go), controlled shutdown,
// elections and rebalance, reassignment (KIP-455), topic config changes
// (unclean election turned on) and log-dir failures each have a file; the
// partition and replica state machines (ctl_partition_sm.go,
// ctl_replica_sm.go) do the read–decide–conditional-write loop of Kafka's
// PartitionStateMachine. Leader election (election.go) is the four
// strategies of Election.scala, the initial leader of a new partition and
// the ISR removal, as pure functions of (assignment, current state,
// liveness). requestBatch (ctl_requests.go) builds LeaderAndIsr v7,
// UpdateMetadata v8 and StopReplica v4 with kmsg; channelManager
// (ctl_channel.go) keeps one ordered queue per broker and retries until
// the broker goes away.
//
// Decisions and their executors: every event's decision is a pure
// function of the context and what the executor read for it, returning
// the context updates, the znode writes and the request batch; none reads
// ZooKeeper, a clock or a random source, or changes the context. They
// live in ctl_decide.go — broker changes (decideBrokerChange,
// partitionsLosingLeader, decideBrokerStartup), ISR change notifications
// (decideIsrChange), leader elections of every strategy (decideElection),
// ISR removal (decideIsrRemoval), the first state of new partitions
// (decideNewPartitions) — and in a ctl_decide_<x>.go per event: controlled
// shutdown (decideControlledShutdown, controlledShutdownRemaining), topic
// deletion (decideDeletionMarkers, decideResumeDeletions,
// decideStopReplicaResponse), reassignment (decideAlterReassignment,
// decideReassignment, decideReassignmentCompletion,
// decideLeaderEpochBump, reassignmentsToResume), ElectLeaders and the auto
// rebalance (decideElectLeaders, electLeadersResults,
// decideAutoRebalance), log-dir events (decideLogDirEvents), config
// changes (newConfigChanges, configChangeTopic, uncleanSetting,
// uncleanEnabledPartitions), topic and partition changes
// (decideTopicChange, decideTopicLoad, decidePartitionModifications),
// failover (decideFailover, deadReplicas, cachedPartitionStates) and
// LeaderAndIsr responses (storageErrorPartitions). The event handlers
// are their executors: they read ZooKeeper, write conditionally, retry on
// a version conflict, update the context and send. Where a decision needs
// a read that depends on an earlier step, the executor reads between two
// decisions: an offline election that needs the topic's unclean setting
// says so (decision.needUncleanConfig); a reassignment's completion is
// decided on the state znode read after its first step; a topic without
// an id gets one the executor draws from Config.NewTopicID. Unit tests
// call the pure decisions directly, and drive the loop with runUntilIdle
// over zkstore's in-memory tree and controllertest's recording channel,
// so their histories are deterministic.
//
// Invariants:
//   - Only the event goroutine touches a Controller's context and
//     watches; everything else enqueues. Every executor re-reads the state
//     znodes it writes and writes them conditionally on the version read.
//   - Per broker, requests leave in the order decided: within one decision
//     LeaderAndIsr, then UpdateMetadata, then StopReplica; the live-broker
//     UpdateMetadata of failover and broker start-up precedes them.
//   - Leader recovery (KIP-704) is not used: with leader-written ISRs no
//     one would clear RECOVERING, so an unclean leader is written RECOVERED.
//   - Every write goes through kafkazk.ControllerWrite, fenced by the
//     /controller_epoch version the controller was elected at; a failed
//     check ends the tenure.
//   - Every leadership decision bumps the leader epoch by exactly one; an
//     ISR written to ZooKeeper is never empty.
//   - Decisions read no clock and draw no randomness: topic ids come from
//     Config.NewTopicID.
//
// Locks: Controller.mu guards only its event queue. channelManager.mu
// guards its queue map, each brokerQueue.mu its pending list; neither is
// held while sending. No lock is taken while holding another.
package controller
