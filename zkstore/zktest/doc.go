// Package zktest is test support for packages whose tests run against a
// zkstore.Client: ForEach runs a test on the in-memory tree, on a
// LocalStore and, when KBROKER_TEST_ZK is host:port, in a private chroot on
// a real server; Main, called from a TestMain, starts a private server
// with scripts/zk.sh when KBROKER_TEST_ZK=start. Only tests import it.
package zktest
