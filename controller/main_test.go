package controller

import (
	"os"
	"testing"
)

// TestMain starts a private ZooKeeper with scripts/zk.sh when
// KBROKER_TEST_ZK=start, points the suite at it and stops it afterwards.
// Any other value is used as host:port of a running server; unset means
// the fake only.
func TestMain(m *testing.M) {
	if os.Getenv("KBROKER_TEST_ZK") != "start" {
		os.Exit(m.Run())
	}
	os.Exit(runWithZooKeeper(m))
}
