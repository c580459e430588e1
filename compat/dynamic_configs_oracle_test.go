package compat

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// kafka-configs on broker configs prints what it prints against Kafka
// 3.9.1 (compat/testdata/dynamic-broker-configs.golden): alters of the
// cluster default and of one broker, their describes with sources and
// synonyms, a custom key (stored, shown as sensitive), and every refusal
// DynamicBrokerConfig makes, with its text. KBROKER_ORACLE=kafka39
// re-records the golden file against Kafka.
func TestDynamicBrokerConfigsOracle(t *testing.T) {
	addr := startOracleTarget(t)
	g := openGolden(t, "dynamic-broker-configs.golden",
		"kafka-configs --entity-type brokers against Apache Kafka 3.9.1 (ZooKeeper mode, broker.id 0).\n"+
			"Regenerate: scripts/deps-kafka39.sh && KBROKER_ORACLE=kafka39 go test -count=1 -run TestDynamicBrokerConfigsOracle ./compat/")
	tr := &transcript{}
	t.Cleanup(func() { g.check(t, "kafka-configs brokers", tr) })
	exception := regexp.MustCompile(`org\.apache\.kafka\.common\.errors\.\w+: .*`)
	// answer runs one command and renders what it printed.
	answer := func(args ...string) []string {
		out, errOut, err := harness.RunTool(t, testCtx(t, time.Minute), "kafka-configs", append([]string{"--bootstrap-server", addr, "--entity-type", "brokers"}, args...)...)
		lines := []string{"$ " + strings.Join(args, " ")}
		if err != nil {
			return append(lines, "  failed: "+exception.FindString(errOut))
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			lines = append(lines, "  "+strings.TrimSpace(line))
		}
		return lines
	}
	add := func(lines []string) {
		for _, l := range lines {
			tr.add("%s", l)
		}
	}
	run := func(args ...string) { add(answer(args...)) }
	// Kafka puts a change into force when its notification arrives;
	// kbroker before it answers (docs/beyond-kafka.md).
	settle := func() {
		if recordingKafka39(t) {
			time.Sleep(2 * time.Second)
		}
	}
	run("--entity-default", "--alter", "--add-config", "message.max.bytes=3000000")
	run("--entity-name", "0", "--alter", "--add-config", "max.connections.per.ip.overrides=[127.0.0.2:3]")
	run("--entity-name", "0", "--alter", "--add-config", "log.segment.bytes=1048576,log.retention.ms=7200000")
	run("--entity-default", "--alter", "--add-config", "my.plugin.setting=on")
	settle()
	run("--entity-default", "--describe")
	run("--entity-name", "0", "--describe")
	run("--entity-name", "0", "--alter", "--delete-config", "log.retention.ms")
	bads := [][]string{
		{"--entity-default", "--alter", "--add-config", "log.retention.hours=1"},
		{"--entity-default", "--alter", "--add-config", "message.max.bytes=lots"},
		{"--entity-default", "--alter", "--add-config", "listeners=PLAINTEXT://:1"},
		{"--entity-name", "0", "--alter", "--add-config", "num.io.threads=100"},
		{"--entity-name", "0", "--alter", "--add-config", "ssl.keystore.location=/x"},
		{"--entity-default", "--alter", "--add-config", "leader.replication.throttled.rate=-5"},
		{"--entity-name", "0", "--alter", "--add-config", "listener.name.plaintext.ssl.key.password=x"},
		{"--entity-default", "--alter", "--add-config", "unclean.leader.election.enable=maybe"},
	}
	// The refusals change nothing, so they run side by side.
	answers := make([][]string, len(bads))
	var wg sync.WaitGroup
	for i, bad := range bads {
		wg.Go(func() { answers[i] = answer(bad...) })
	}
	wg.Wait()
	for _, a := range answers {
		add(a)
	}
	settle()
	run("--entity-name", "0", "--describe")
}
