package harness

// Network faults between real processes, with Linux network namespaces.
//
// Topology of a NetCluster (one per test, names and addresses unique per
// test so tests and test binaries can run side by side):
//
//	            root namespace (the test process: NodeClient)
//	                      | veth, route to the test's /24
//	   +------------ switch namespace (ip_forward=1) -----------+
//	   | FORWARD chain: the faults (iptables DROP rules)          |
//	   +---+----------------+----------------+-----------------+--+
//	       | veth           | veth           | veth            | veth
//	   ZooKeeper ns     broker 1 ns      broker 2 ns  ...  broker n ns
//
// Every node has its own namespace and one veth pair into the switch
// namespace, on a /30 of its own inside the test's /24 (taken from
// 198.18.0.0/15, the range set aside for network benchmarks, so it cannot
// clash with a real network). A node's default route points at the switch,
// so every packet between two nodes, and between the test process and a
// node, crosses the switch's FORWARD chain, where the fault primitives add
// and remove rules:
//
//   - Cut(a, b): drop everything between a and b, both ways (a silent
//     partition: no RST, no ICMP, as when a link or switch port dies).
//   - Isolate(a): Cut a from every other node, the test process included.
//   - Partition(groups...): Cut every pair of nodes in different groups.
//   - Loss(a, b, p): drop each packet between a and b with probability p
//     (iptables -m statistic --mode random).
//   - Slow(a, rate): a tbf rate limit on both directions of a's link.
//   - Heal(): remove every fault; each fault's own Heal removes just it.
//
// The kernel this runs on has no sch_netem (nor the prio qdisc), so there
// is no added delay, jitter or reordering: tbf's queue is the only latency
// a fault can add. NodeZK names the ZooKeeper node, NodeClient the test
// process; brokers are named by their broker.id.
//
// Brokers are started as `ip netns exec <ns> bin/kbroker ...`: ip execs the
// broker after entering the namespace, so the pid the harness holds is the
// broker's own, and Kill, Term, Pause and Restart work as for StartCluster.
// ZooKeeper runs from scripts/zk.sh under `ip netns exec` with ZK_HOST set
// to its namespace's address. Everything needs root; without it (or
// without a working `ip netns`) StartNetCluster fails the test.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// NetNode names a node of a NetCluster: a broker by its broker.id, or one
// of NodeZK and NodeClient.
type NetNode int32

const (
	// NodeZK is the ZooKeeper server.
	NodeZK NetNode = -1
	// NodeClient is the test process in the root namespace: clients the
	// test creates reach the nodes through this link.
	NodeClient NetNode = -2
)

func (n NetNode) String() string {
	switch n {
	case NodeZK:
		return "zk"
	case NodeClient:
		return "client"
	}
	return "broker " + strconv.Itoa(int(n))
}

// Fixed ports: every namespace has its own port space.
const (
	netBrokerPort = 9092
	netZKPort     = 2181
)

// netSubnets counts the test's /24s taken by this process; with the pid it
// picks a /24 of 198.18.0.0/15 and the names of namespaces and links.
var netSubnets atomic.Int32

// NetCluster is a Cluster whose ZooKeeper and brokers each run in their own
// network namespace, with faults injected between them (see the top of
// netns.go).
type NetCluster struct {
	*Cluster

	t      testing.TB
	tag    string // unique per NetCluster: in every namespace and link name
	sw     string // the switch namespace
	nodes  map[NetNode]*netLink
	mu     sync.Mutex
	faults []*NetFault
}

// netLink is one node's namespace and its veth pair into the switch.
type netLink struct {
	ns     string // "" for NodeClient: the root namespace
	addr   string // the node's address
	swIf   string // the pair's end in the switch namespace
	nodeIf string // the pair's end in the node's namespace
}

// NetFault is one injected fault; Heal removes it. Faults are injected and
// healed from the test's goroutine: a failing ip, iptables or tc command
// fails the test (t.Fatal).
type NetFault struct {
	c        *NetCluster
	what     string
	rules    [][]string // iptables rule specs in the switch's FORWARD chain
	qdiscs   [][2]string
	isHealed bool
}

// StartNetCluster starts ZooKeeper and n kbrokers (broker.id 1..n), each in
// its own network namespace (see the top of netns.go), with the same
// settings as StartCluster, and waits until every broker lists all n. The
// test's cleanup stops the processes first and then removes the
// namespaces, links and rules.
func StartNetCluster(t testing.TB, n int, overrides ...string) *NetCluster {
	t.Helper()
	return startNetCluster(t, n, false, overrides)
}

// StartNetClusterKafka39 is StartNetCluster with Apache Kafka 3.9.1
// brokers in ZooKeeper mode (compat/lib39) in place of kbroker, on the same
// settings: the same workload and faults can then be run against both. A
// restarted Kafka broker is started again, a second later, each time it
// exits during start-up (its previous registration still in ZooKeeper), as
// a service manager would.
func StartNetClusterKafka39(t testing.TB, n int, overrides ...string) *NetCluster {
	t.Helper()
	return startNetCluster(t, n, true, overrides)
}

func startNetCluster(t testing.TB, n int, kafka39 bool, overrides []string) *NetCluster {
	t.Helper()
	if Apache() {
		t.Fatal("harness: StartNetCluster runs kbroker only (KBROKER_APACHE_KAFKA is set)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("harness: StartNetCluster needs root (network namespaces, veth, iptables); run the network-fault tests as root")
	}
	if n < 1 || n > 60 {
		t.Fatalf("harness: StartNetCluster with %d brokers: 1..60 fit a /24", n)
	}
	for _, tool := range []string{"ip", "iptables", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("harness: StartNetCluster needs %s: %v", tool, err)
		}
	}
	var bin, lib string
	if kafka39 {
		lib = kafka39Lib(t)
	} else {
		bin = Build(t)
	}
	nc := &NetCluster{t: t, nodes: map[NetNode]*netLink{}, Cluster: &Cluster{}}
	// Registered before any process starts, so it runs after they stop.
	t.Cleanup(nc.teardown)
	base := nc.allocate(t)

	order := []NetNode{NodeClient, NodeZK}
	for i := 1; i <= n; i++ {
		order = append(order, NetNode(i))
	}
	for k, node := range order {
		nc.addLink(t, node, base, k)
	}

	zkLink := nc.nodes[NodeZK]
	nc.ZK = startZooKeeperIn(t, zkLink.ns, zkLink.addr)
	// Every broker's path to ZooKeeper crosses the switch: check it before
	// a broker's start-up timeout can blame ZooKeeper for the harness.
	for i := 1; i <= n; i++ {
		nc.waitReachable(t, NetNode(i), nc.ZK.Addr)
	}
	rf := min(n, 3)
	for i := 1; i <= n; i++ {
		l := nc.nodes[NetNode(i)]
		// A broker gives up when it has no ZooKeeper session within
		// zookeeper.connection.timeout.ms (the session timeout, 6 s, by
		// default); ZooKeeper's first sessions on a loaded machine can
		// take longer than that (its first transaction preallocates the
		// log file), and a start-up failure is not what these tests are
		// about.
		b := newBroker(t, bin, append(append(slices.Clone(clusterDefaults), "zookeeper.connection.timeout.ms=30000"), overrides...))
		if kafka39 {
			b.bin = "java"
			b.apache = &apacheNode{lib: lib, zkMode: true}
		}
		b.Addr = net.JoinHostPort(l.addr, strconv.Itoa(netBrokerPort))
		b.Port = netBrokerPort
		b.wrapper = []string{"ip", "netns", "exec", l.ns}
		nc.Brokers = append(nc.Brokers, configureClusterBroker(t, b, int32(i), nc.ZK.Addr, rf))
	}
	for _, b := range nc.Brokers {
		b.start(t)
	}
	nc.waitAllStarted(t)
	return nc
}

// allocate creates the switch namespace under a name and /24 no other
// NetCluster (of this or another test binary) holds, and returns the /24's
// first three octets.
func (nc *NetCluster) allocate(t testing.TB) string {
	t.Helper()
	pid := os.Getpid()
	var lastErr error
	for attempt := 0; attempt < 64; attempt++ {
		idx := (pid*8 + int(netSubnets.Add(1))) % 512
		base := fmt.Sprintf("198.%d.%d", 18+idx/256, idx%256)
		// A route to the /24 in the root namespace means another run
		// holds it.
		if out, err := exec.Command("ip", "route", "show", base+".0/24").CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
			lastErr = fmt.Errorf("%s.0/24 in use (%s %v)", base, strings.TrimSpace(string(out)), err)
			continue
		}
		tag := fmt.Sprintf("kn%03x", idx)
		sw := tag + "-sw"
		if out, err := exec.Command("ip", "netns", "add", sw).CombinedOutput(); err != nil {
			lastErr = fmt.Errorf("ip netns add %s: %v: %s", sw, err, out)
			continue
		}
		nc.tag, nc.sw = tag, sw
		nc.must(t, "ip", "-n", sw, "link", "set", "lo", "up")
		nc.must(t, "ip", "netns", "exec", sw, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		return base
	}
	t.Fatalf("harness: no network namespace / subnet for a NetCluster (is `ip netns` usable here?): %v", lastErr)
	return ""
}

// addLink puts node on the k-th /30 of the test's /24: the switch end is
// .4k+1, the node's end .4k+2.
func (nc *NetCluster) addLink(t testing.TB, node NetNode, base string, k int) {
	t.Helper()
	suffix := fmt.Sprintf("%d", k)
	l := &netLink{
		addr:   fmt.Sprintf("%s.%d", base, 4*k+2),
		swIf:   nc.tag + "s" + suffix,
		nodeIf: nc.tag + "n" + suffix,
	}
	swAddr := fmt.Sprintf("%s.%d", base, 4*k+1)
	nc.must(t, "ip", "link", "add", l.nodeIf, "type", "veth", "peer", "name", l.swIf)
	nc.nodes[node] = l
	nc.must(t, "ip", "link", "set", l.swIf, "netns", nc.sw)
	nc.must(t, "ip", "-n", nc.sw, "addr", "add", swAddr+"/30", "dev", l.swIf)
	nc.must(t, "ip", "-n", nc.sw, "link", "set", l.swIf, "up")
	if node == NodeClient {
		nc.must(t, "ip", "addr", "add", l.addr+"/30", "dev", l.nodeIf)
		nc.must(t, "ip", "link", "set", l.nodeIf, "up")
		nc.must(t, "ip", "route", "add", base+".0/24", "via", swAddr, "dev", l.nodeIf)
		return
	}
	l.ns = fmt.Sprintf("%s-%s", nc.tag, strings.ReplaceAll(node.String(), " ", ""))
	nc.must(t, "ip", "netns", "add", l.ns)
	nc.must(t, "ip", "-n", l.ns, "link", "set", "lo", "up")
	nc.must(t, "ip", "link", "set", l.nodeIf, "netns", l.ns)
	nc.must(t, "ip", "-n", l.ns, "addr", "add", l.addr+"/30", "dev", l.nodeIf)
	nc.must(t, "ip", "-n", l.ns, "link", "set", l.nodeIf, "up")
	nc.must(t, "ip", "-n", l.ns, "route", "add", "default", "via", swAddr)
}

// waitReachable waits (10 s at most) until a TCP connection from node's
// namespace to addr succeeds.
func (nc *NetCluster) waitReachable(t testing.TB, node NetNode, addr string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	script := fmt.Sprintf("until (exec 3<>/dev/tcp/%s/%s) 2>/dev/null; do sleep 0.1; done", host, port)
	out, err := exec.Command("ip", "netns", "exec", nc.nodes[node].ns, "timeout", "10", "bash", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("harness: %v cannot reach %s through the switch within 10 s: %v %s\nswitch rules:\n%s", node, addr, err, out, nc.Rules())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Logf("harness: %v reached %s only after %v", node, addr, d.Round(time.Millisecond))
	}
}

// teardown removes the client link (its peer goes with it) and every
// namespace: the nodes' veths and the switch's rules and qdiscs go with
// their namespaces. The processes are gone by now (their cleanups ran
// first).
func (nc *NetCluster) teardown() {
	if l := nc.nodes[NodeClient]; l != nil {
		nc.try("ip", "link", "del", l.nodeIf)
	}
	for node, l := range nc.nodes {
		if node != NodeClient && l.ns != "" {
			nc.try("ip", "netns", "del", l.ns)
		}
	}
	if nc.sw != "" {
		nc.try("ip", "netns", "del", nc.sw)
	}
}

func (nc *NetCluster) must(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("harness: %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func (nc *NetCluster) try(args ...string) {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		nc.t.Logf("harness cleanup: %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Addr is node's address in its namespace (for the client, the test
// process's address on its link).
func (nc *NetCluster) Addr(node NetNode) string {
	l := nc.nodes[node]
	if l == nil {
		nc.t.Fatalf("harness: no node %v", node)
	}
	return l.addr
}

// Namespace is the network namespace node runs in ("" for NodeClient).
func (nc *NetCluster) Namespace(node NetNode) string { return nc.nodes[node].ns }

// Cut drops every packet between a and b, both ways, until healed.
func (nc *NetCluster) Cut(a, b NetNode) *NetFault {
	nc.t.Helper()
	return nc.inject(fmt.Sprintf("cut %v | %v", a, b), nc.pairRules(a, b, nil), nil)
}

// Isolate cuts node from every other node, the test process included.
func (nc *NetCluster) Isolate(node NetNode) *NetFault {
	nc.t.Helper()
	addr := nc.Addr(node)
	return nc.inject(fmt.Sprintf("isolate %v", node), [][]string{
		{"-s", addr, "-j", "DROP"},
		{"-d", addr, "-j", "DROP"},
	}, nil)
}

// Partition cuts every node of each group from every node of the other
// groups; nodes in no group keep reaching everyone.
func (nc *NetCluster) Partition(groups ...[]NetNode) *NetFault {
	nc.t.Helper()
	var rules [][]string
	var names []string
	for i, g := range groups {
		names = append(names, fmt.Sprint(g))
		for _, h := range groups[i+1:] {
			for _, a := range g {
				for _, b := range h {
					rules = append(rules, nc.pairRules(a, b, nil)...)
				}
			}
		}
	}
	return nc.inject("partition "+strings.Join(names, " | "), rules, nil)
}

// Loss drops each packet between a and b (both ways) with probability p.
func (nc *NetCluster) Loss(a, b NetNode, p float64) *NetFault {
	nc.t.Helper()
	if p <= 0 || p >= 1 {
		nc.t.Fatalf("harness: Loss probability %v outside (0, 1)", p)
	}
	match := []string{"-m", "statistic", "--mode", "random", "--probability", strconv.FormatFloat(p, 'f', -1, 64)}
	return nc.inject(fmt.Sprintf("loss %v %v-%v", p, a, b), nc.pairRules(a, b, match), nil)
}

// Slow limits both directions of node's link to rate (tc syntax, e.g.
// "2mbit") with a token bucket filter: traffic beyond the rate queues (up
// to 200 ms worth) and is dropped past that. There is no netem in this
// kernel, so this is the only slowness available (no fixed delay, jitter
// or reordering).
func (nc *NetCluster) Slow(node NetNode, rate string) *NetFault {
	nc.t.Helper()
	l := nc.nodes[node]
	if l == nil {
		nc.t.Fatalf("harness: no node %v", node)
	}
	// [namespace, device]: the switch's end shapes traffic to the node,
	// the node's end traffic from it.
	qdiscs := [][2]string{{nc.sw, l.swIf}, {l.ns, l.nodeIf}}
	return nc.inject(fmt.Sprintf("slow %v %s", node, rate), nil, qdiscs, "rate", rate)
}

func (nc *NetCluster) pairRules(a, b NetNode, match []string) [][]string {
	aa, ba := nc.Addr(a), nc.Addr(b)
	return [][]string{
		append(append([]string{"-s", aa, "-d", ba}, match...), "-j", "DROP"),
		append(append([]string{"-s", ba, "-d", aa}, match...), "-j", "DROP"),
	}
}

// inject adds the rules (and tbf qdiscs, tbfArgs naming the rate) and
// remembers the fault for Heal.
func (nc *NetCluster) inject(what string, rules [][]string, qdiscs [][2]string, tbfArgs ...string) *NetFault {
	nc.t.Helper()
	f := &NetFault{c: nc, what: what, rules: rules, qdiscs: qdiscs}
	for _, r := range rules {
		nc.must(nc.t, append([]string{"ip", "netns", "exec", nc.sw, "iptables", "-w", "-A", "FORWARD"}, r...)...)
	}
	for _, q := range qdiscs {
		args := append([]string{"tc", "qdisc", "replace", "dev", q[1], "root", "tbf"}, tbfArgs...)
		args = append(args, "burst", "32kbit", "latency", "200ms")
		if q[0] != "" {
			args = append([]string{"ip", "netns", "exec", q[0]}, args...)
		}
		nc.must(nc.t, args...)
	}
	nc.mu.Lock()
	nc.faults = append(nc.faults, f)
	nc.mu.Unlock()
	nc.t.Logf("harness: fault: %s", what)
	return f
}

// Heal removes this fault's rules and qdiscs (once).
func (f *NetFault) Heal() {
	nc := f.c
	nc.t.Helper()
	nc.mu.Lock()
	if f.isHealed {
		nc.mu.Unlock()
		return
	}
	f.isHealed = true
	nc.mu.Unlock()
	for _, r := range f.rules {
		nc.must(nc.t, append([]string{"ip", "netns", "exec", nc.sw, "iptables", "-w", "-D", "FORWARD"}, r...)...)
	}
	for _, q := range f.qdiscs {
		args := []string{"tc", "qdisc", "del", "dev", q[1], "root"}
		if q[0] != "" {
			args = append([]string{"ip", "netns", "exec", q[0]}, args...)
		}
		nc.must(nc.t, args...)
	}
	nc.t.Logf("harness: healed: %s", f.what)
}

// Heal removes every fault still in place.
func (nc *NetCluster) Heal() {
	nc.t.Helper()
	nc.mu.Lock()
	faults := slices.Clone(nc.faults)
	nc.faults = nil
	nc.mu.Unlock()
	for _, f := range faults {
		f.Heal()
	}
}

// Rules lists the switch's FORWARD chain with each rule's packet count,
// for logs: evidence that a fault dropped what it should.
func (nc *NetCluster) Rules() string {
	out, err := exec.Command("ip", "netns", "exec", nc.sw, "iptables", "-w", "-L", "FORWARD", "-v", "-n", "-x").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("iptables -L: %v: %s", err, out)
	}
	return string(out)
}

// startZooKeeperIn runs zk.sh under `ip netns exec ns`, listening on
// host:2181; stopped through its pid file at cleanup like StartZooKeeper's.
func startZooKeeperIn(t testing.TB, ns, host string) *ZooKeeper {
	t.Helper()
	z := &ZooKeeper{
		Addr:   net.JoinHostPort(host, strconv.Itoa(netZKPort)),
		Port:   netZKPort,
		Dir:    t.TempDir(),
		script: filepath.Join(RepoRoot(t), "scripts", "zk.sh"),
		netns:  ns,
		host:   host,
	}
	t.Cleanup(func() { z.stop(t) })
	if out, err := z.run("start"); err != nil {
		t.Fatalf("zk.sh start in %s: %v\n%s", ns, err, out)
	}
	return z
}
