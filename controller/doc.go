// Package controller is kbroker's cluster mode in ZooKeeper, as Apache Kafka
// 3.9 does it in ZooKeeper mode: broker registration, controller election
// and the controller's decisions. The reference is
// reference/kafka-zk-replication.md §1 (znodes) and §2 (controller).
//
// What is here (foundations; nothing is wired into server/ or cmd/ yet):
//
//   - zkClient (zk.go): the ZooKeeper operations we use — Create in the four
//     modes, Get/Exists/Children with one-shot watches, versioned Set and
//     Delete, atomic Multi, session state. zkConn (zk_conn.go) implements it
//     over github.com/go-zookeeper/zk, honouring a zookeeper.connect chroot;
//     fakeZK (zk_fake*.go) is an in-memory ensemble for unit tests. Both pass
//     the suite in zk_suite_test.go; set KBROKER_TEST_ZK=host:port to run it
//     (and every ZooKeeper-backed test) against a real server too, or
//     KBROKER_TEST_ZK=start to have the tests start one with scripts/zk.sh.
//   - Znode payloads (znodes*.go, znode_json.go, znode_paths.go): every
//     znode of §1.3 with encode (Kafka's bytes, field order as Kafka writes
//     it) and a lenient decode (Kafka's required keys only).
//   - assignReplicasToBrokers (assign.go): Kafka's replica assignment,
//     rack-unaware and rack-aware, with an injectable random source.
//   - Leader election (election.go): the four strategies of §2.5, the
//     initial leader of a new partition and the controller's ISR removal,
//     as pure functions of (assignment, current state, liveness).
//   - Registration and election (registration.go, controller_election.go,
//     member.go): top-level paths, /cluster/id, the ephemeral broker
//     registration, one controller election attempt, writes fenced by the
//     /controller_epoch version, and zkMember.run, the loop that registers
//     and elects again for every session and every /controller deletion.
//
// Invariants:
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
// Locks: fakeZK.mu guards the fake's whole tree, sessions and watches;
// watch channels are buffered so firing under it never blocks. zkConn.mu
// guards only the session state that go-zookeeper's callback updates; it is
// never held across a ZooKeeper call. zkMember has no locks: its state lives
// on run's goroutine and its callbacks are called there.
package controller
