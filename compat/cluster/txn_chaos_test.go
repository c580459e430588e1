package cluster

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// Exactly-once through broker failures: a consume-transform-produce loop
// (txnCopier: kgo.GroupTransactSession, read_committed, offsets committed
// inside each transaction) copies 100,000 records from an input topic to an
// output topic on 3 brokers, replication factor 3 and min.insync.replicas 2
// everywhere, __transaction_state and __consumer_offsets included. Meanwhile
// the test SIGKILLs, and restarts, in turn the transaction coordinator, a
// leader of an output partition and the group coordinator, twice each.
//
// Afterwards read_committed shows every input record in the output exactly
// once, in its partition's order; nothing an ABORT marker ended is visible;
// and no transaction is left open. How long each fault stopped the copy
// is logged.
//
// The copy runs in stretches of total/(faults+1) records (txnCopier's
// gate): each fault is injected just after the next stretch opens, so it
// lands while transactions are in flight, and the cluster heals (the
// broker restarted, every ISR full again) before the next one.
//
// txn_kafka_test.go (build tag kafkaref) runs the same against Apache
// Kafka, to show the test's own logic holds there.

// txnChaosSettings are Kafka's production settings for transactions on
// three brokers, with the partition counts spelled out because the test
// computes coordinator partitions from them.
var txnChaosSettings = []string{
	"min.insync.replicas=2",
	"offsets.topic.replication.factor=3",
	fmt.Sprintf("offsets.topic.num.partitions=%d", internalTopicPartitions),
	"transaction.state.log.replication.factor=3",
	"transaction.state.log.min.isr=2",
	fmt.Sprintf("transaction.state.log.num.partitions=%d", internalTopicPartitions),
}

const (
	roleTxnCoordinator   = "transaction coordinator"
	roleOutputLeader     = "output partition leader"
	roleGroupCoordinator = "group coordinator"
)

// txnFault is one SIGKILL and what it did to the copy.
type txnFault struct {
	role, roles    string
	victim         int32
	killedAt       time.Time
	restartedAfter time.Duration // SIGKILL to the restarted broker registered and listed
	stall          time.Duration // longest time without a committed transaction from the kill on
	firstCommit    time.Duration // the kill to the first commit after it
	stretchAfter   time.Duration // the kill to the stretch's last record committed
	errs           []string      // copier errors while the fault lasted
}

func TestTxnChaosCopyExactlyOnce(t *testing.T) {
	begin := time.Now()
	c := harness.StartCluster(t, 3, txnChaosSettings...)
	conn := c.ZK.Connect(t)
	runTxnChaos(t, txnChaosCluster{
		c: c,
		killAndRestart: func(id int32) {
			killAndRestart(t, c, conn, id, 0)
		},
		controller: func() int32 {
			id, err := controllerID(conn)
			if err != nil {
				t.Fatal(err)
			}
			return id
		},
	}, 6)
	t.Logf("whole test %v", time.Since(begin).Round(time.Millisecond))
}

// txnChaosCluster is what runTxnChaos needs of a cluster: its brokers, a
// way to SIGKILL one and have it back, and who the controller is (for the
// log).
type txnChaosCluster struct {
	c              *harness.Cluster
	killAndRestart func(id int32)
	controller     func() int32
}

// runTxnChaos creates the topics, writes the input, and copies it while
// injecting faults (0 for none) from the fixed rotation of roles.
func runTxnChaos(t *testing.T, tc txnChaosCluster, nFaults int) {
	const (
		input, output  = "txn-chaos-in", "txn-chaos-out"
		group, txnID   = "txn-chaos-group", "txn-chaos-copier"
		partitions     = 6
		records        = 100_000
		stretchTimeout = 90 * time.Second
	)
	c := tc.c
	rf := min(len(c.Brokers), 3)
	var topicConfigs map[string]*string
	if rf == 3 {
		topicConfigs = minISR2
	}
	createTopic(t, c, input, partitions, int16(rf), topicConfigs)
	createTopic(t, c, output, partitions, int16(rf), topicConfigs)
	writeStart := time.Now()
	in := produceTxnInput(t, c.Addrs(), input, "txnchaos", partitions, records)
	t.Logf("%d input records written in %v", records, time.Since(writeStart).Round(time.Millisecond))

	rotation := []string{roleTxnCoordinator, roleOutputLeader, roleGroupCoordinator}
	stretch := records / (nFaults + 1)
	cp := startTxnCopier(t, c.Addrs(), input, output, group, txnID, records)
	cp.gate.Store(int64(stretch))
	copyStart := time.Now()
	// The first transaction creates __transaction_state and
	// __consumer_offsets on the way.
	cp.waitCommitted(t, 1, stretchTimeout)
	t.Logf("first transaction committed %v after the copier started", time.Since(copyStart).Round(time.Millisecond))
	cp.waitCommitted(t, stretch, stretchTimeout)
	t.Logf("first stretch of %d records, no fault, copied in %v", stretch, time.Since(copyStart).Round(time.Millisecond))

	var faults []txnFault
	for i := range nFaults {
		role := rotation[i%len(rotation)]
		gate := stretch * (i + 1)
		cp.waitCommitted(t, gate, stretchTimeout)
		waitFullISRAgreed(t, c, rf, 60*time.Second, input, output, transactionStateTopic, offsetsTopic)
		roles := currentTxnRoles(t, c, tc.controller(), output, group, txnID)
		victim := map[string]int32{
			roleTxnCoordinator:   roles.txnCoordinator,
			roleOutputLeader:     roles.outputLeaderVictim(),
			roleGroupCoordinator: roles.groupCoordinator,
		}[role]
		if victim < 0 {
			t.Fatalf("fault %d: no broker is the %s: %+v", i+1, role, roles)
		}
		// Open the next stretch and wait for one more commit, so the
		// kill hits a copier that is mid-transaction.
		before := cp.committedRecords()
		cp.gate.Store(int64(gate + stretch))
		cp.waitCommitted(t, before+1, 30*time.Second)
		errsBefore := cp.errCounts()
		f := txnFault{role: role, roles: roles.describe(victim), victim: victim, killedAt: time.Now()}
		t.Logf("fault %d: SIGKILL broker %d, the %s (%s), at %d committed records", i+1, victim, role, f.roles, cp.committedRecords())
		tc.killAndRestart(victim)
		f.restartedAfter = time.Since(f.killedAt)
		cp.waitCommitted(t, gate+stretch, stretchTimeout)
		f.stretchAfter = time.Since(f.killedAt)
		f.stall, f.firstCommit = cp.stall(f.killedAt, time.Now())
		f.errs = errorsSince(errsBefore, cp.errCounts())
		t.Logf("fault %d: copy stalled %v (first commit %v after the kill), broker %d back after %v, stretch done %v after the kill; copier errors meanwhile: %v",
			i+1, f.stall.Round(time.Millisecond), f.firstCommit.Round(time.Millisecond), victim,
			f.restartedAfter.Round(time.Millisecond), f.stretchAfter.Round(time.Millisecond), f.errs)
		faults = append(faults, f)
	}
	cp.gate.Store(records)
	cp.wait(t, 2*time.Minute)
	t.Logf("copy of %d records took %v", records, time.Since(copyStart).Round(time.Millisecond))
	if len(faults) > 0 {
		logTxnFaults(t, faults)
	}

	waitFullISRAgreed(t, c, rf, 60*time.Second, output)
	verifyTxnCopy(t, c.Addrs(), output, in)
}

// currentTxnRoles finds the coordinators (each agreed by Metadata and
// FindCoordinator on every broker), the controller and the output leaders.
func currentTxnRoles(t *testing.T, c *harness.Cluster, controller int32, output, group, txnID string) txnRoles {
	t.Helper()
	r := txnRoles{
		txnCoordinator:   coordinatorOf(t, c, txnID, 1, transactionStateTopic),
		groupCoordinator: coordinatorOf(t, c, group, 0, offsetsTopic),
		controller:       controller,
		outputLeaders:    map[int32]int32{},
	}
	md, err := agreedMetadata(c.Addrs(), output)
	if err != nil {
		t.Fatal(err)
	}
	for p, v := range md[output] {
		r.outputLeaders[p] = v.Leader
	}
	return r
}

// errorsSince lists the copier errors counted between two snapshots.
func errorsSince(before, after map[string]int) []string {
	var out []string
	for e, n := range after {
		if d := n - before[e]; d > 0 {
			out = append(out, fmt.Sprintf("%d× %s", d, e))
		}
	}
	sort.Strings(out)
	return out
}

// logTxnFaults prints the stall of every fault as one table.
func logTxnFaults(t *testing.T, faults []txnFault) {
	t.Helper()
	var b strings.Builder
	b.WriteString("stall per fault:\n| # | killed | broker | its roles | stall | first commit | restarted | stretch done |\n")
	byRole := map[string][]time.Duration{}
	for i, f := range faults {
		fmt.Fprintf(&b, "| %d | %s | %d | %s | %v | %v | %v | %v |\n", i+1, f.role, f.victim, f.roles,
			f.stall.Round(time.Millisecond), f.firstCommit.Round(time.Millisecond),
			f.restartedAfter.Round(time.Millisecond), f.stretchAfter.Round(time.Millisecond))
		byRole[f.role] = append(byRole[f.role], f.stall.Round(time.Millisecond))
	}
	for _, role := range slices.Sorted(maps.Keys(byRole)) {
		fmt.Fprintf(&b, "%s: stalls %v\n", role, byRole[role])
	}
	t.Log(b.String())
}
