package kafkazk

import (
	"os"
	"testing"

	"github.com/kbroker/kbroker/zkstore/zktest"
)

// TestMain runs the ZooKeeper-backed tests against the in-memory tree, the
// local store and, when KBROKER_TEST_ZK says so, a real server.
func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }
