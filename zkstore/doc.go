// Package zkstore is kbroker's metadata store seen as a ZooKeeper tree:
// the Client interface (the ZooKeeper operations kbroker uses — Create in
// the four modes, Get/Exists/Children with one-shot watches, versioned Set
// and Delete, atomic Multi, session state) and its implementations.
//
//   - Conn (zk_conn.go) over github.com/go-zookeeper/zk, honouring a
//     zookeeper.connect chroot: cluster mode.
//   - Mem (zk_mem*.go), an in-memory ensemble whose MemConn sessions can be
//     expired, disconnected and reconnected.
//   - LocalStore (store_local.go), a Mem whose persistent znodes are
//     journaled to a file in the log dir: the standalone broker's store,
//     a cluster of one without ZooKeeper.
//
// All three pass the suite in zk_suite_test.go (package zkstore_test);
// zktest runs it, and every ZooKeeper-backed test of other packages,
// against a real server too when KBROKER_TEST_ZK is set. What the znodes
// mean is kafkazk's business, not this package's.
//
// Locks: Mem.mu guards the whole tree, every session and every watch;
// watch channels are buffered so firing under it never blocks. Conn.mu
// guards only the session state that go-zookeeper's callback updates and
// is never held across a ZooKeeper call.
package zkstore
