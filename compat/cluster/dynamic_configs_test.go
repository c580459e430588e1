package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// Dynamic broker configs in a cluster: a change sent to one broker is
// stored in Kafka's znodes and put into force by every broker (the
// leader of a partition on another broker takes the larger
// message.max.bytes), and a per-broker value reaches only its broker.
func TestDynamicBrokerConfigsCluster(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	first, last := c.Brokers[0], c.Brokers[2]
	const topic = "dyn-cluster"
	createTopicAssigned(t, c, topic, map[int32][]int32{0: {last.ID, first.ID, c.Brokers[1].ID}}, nil)

	configs := func(addr string, args ...string) string {
		t.Helper()
		out, errOut, err := harness.RunTool(t, testCtx(t, time.Minute), "kafka-configs", append([]string{"--bootstrap-server", addr, "--entity-type", "brokers"}, args...)...)
		if err != nil {
			t.Fatalf("kafka-configs %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out
	}
	configs(first.Addr, "--entity-default", "--alter", "--add-config", "message.max.bytes=3000000")
	data, _, err := conn.Get("/config/brokers/<default>")
	if err != nil || string(data) != `{"version":1,"config":{"message.max.bytes":"3000000"}}` {
		t.Fatalf("/config/brokers/<default> = %s (%v)", data, err)
	}
	if got := newestConfigChange(t, conn); got != `{"version":2,"entity_path":"brokers/<default>"}` {
		t.Fatalf("newest /config/changes notification %s", got)
	}

	cl := newClient(t, []string{last.Addr}, kgo.ProducerBatchMaxBytes(4_000_000), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordRetries(0), kgo.RequiredAcks(kgo.AllISRAcks()))
	waitUntil(t, 15*time.Second, "a 2 MB record taken by the leader on another broker", func() error {
		return cl.ProduceSync(testCtx(t, 10*time.Second), &kgo.Record{Topic: topic, Value: make([]byte, 2_000_000)}).FirstErr()
	})

	// The replica fetchers are reassigned to a new count; replication
	// goes on: acks=all writes still reach every replica.
	configs(first.Addr, "--entity-default", "--alter", "--add-config", "num.replica.fetchers=2")
	if out := configs(first.Addr, "--entity-name", strconv.Itoa(int(first.ID)), "--describe", "--all"); !strings.Contains(out, "num.replica.fetchers=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:num.replica.fetchers=2") {
		t.Fatalf("num.replica.fetchers not in force:\n%s", out)
	}
	for range 5 {
		if err := cl.ProduceSync(testCtx(t, 10*time.Second), &kgo.Record{Topic: topic, Value: []byte("after resize")}).FirstErr(); err != nil {
			t.Fatalf("acks=all after the fetcher resize: %v", err)
		}
	}
	waitFullISR(t, conn, topic, 1, 3)

	lastID := strconv.Itoa(int(last.ID))
	configs(first.Addr, "--entity-name", lastID, "--alter", "--add-config", "log.segment.bytes=1048576")
	if data, _, err := conn.Get("/config/brokers/" + lastID); err != nil || string(data) != `{"version":1,"config":{"log.segment.bytes":"1048576"}}` {
		t.Fatalf("/config/brokers/%s = %s (%v)", lastID, data, err)
	}
	waitUntil(t, 15*time.Second, "the per-broker value in force on its broker only", func() error {
		for _, b := range c.Brokers {
			out := configs(first.Addr, "--entity-name", strconv.Itoa(int(b.ID)), "--describe", "--all")
			want := "log.segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}"
			if b == last {
				want = "log.segment.bytes=1048576 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.segment.bytes=1048576, DEFAULT_CONFIG:log.segment.bytes=1073741824}"
			}
			if !strings.Contains(out, want) {
				return fmt.Errorf("broker %d does not describe %s", b.ID, want)
			}
		}
		return nil
	})
}

// newestConfigChange is the payload of the last /config/changes
// notification.
func newestConfigChange(t *testing.T, conn *zk.Conn) string {
	t.Helper()
	names, _, err := conn.Children("/config/changes")
	if err != nil || len(names) == 0 {
		t.Fatalf("/config/changes: %v %v", names, err)
	}
	sort.Strings(names) // fixed-width sequence numbers
	data, _, err := conn.Get("/config/changes/" + names[len(names)-1])
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
