package config

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/logstore"
)

func writeProps(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, text string, overrides ...string) (*Config, []string) {
	t.Helper()
	c, warnings, err := Load(writeProps(t, text), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return c, warnings
}

func TestDefaults(t *testing.T) {
	c, warnings := mustLoad(t, "")
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"broker.id", c.BrokerID, int32(0)},
		{"listeners", c.Listeners, []Listener{{"PLAINTEXT", "", 9092}}},
		{"advertised.listeners", c.AdvertisedListeners, []Listener{{"PLAINTEXT", "127.0.0.1", 9092}}},
		{"inter.broker.listener.name", c.InterBrokerListenerName, "PLAINTEXT"},
		{"log.dirs", c.LogDirs, []string{"/tmp/kafka-logs"}},
		{"num.partitions", c.NumPartitions, int32(1)},
		{"default.replication.factor", c.DefaultReplicationFactor, int16(1)},
		{"auto.create.topics.enable", c.AutoCreateTopicsEnable, true},
		{"delete.topic.enable", c.DeleteTopicEnable, true},
		{"log.segment.bytes", c.LogSegmentBytes, int64(1 << 30)},
		{"log.roll", c.LogRoll, 168 * time.Hour},
		{"log.retention", c.LogRetention, 168 * time.Hour},
		{"log.retention.bytes", c.LogRetentionBytes, int64(-1)},
		{"log.retention.check.interval.ms", c.LogRetentionCheckInterval, 5 * time.Minute},
		{"producer.id.expiration.ms", c.ProducerIDExpiration, 24 * time.Hour},
		{"log.flush.interval.messages", c.LogFlushIntervalMessages, int64(math.MaxInt64)},
		{"log.flush.interval.ms", c.LogFlushInterval, time.Duration(math.MaxInt64)},
		{"log.index.interval.bytes", c.LogIndexIntervalBytes, int32(4096)},
		{"log.index.size.max.bytes", c.LogIndexSizeMaxBytes, int32(10 << 20)},
		{"log.cleanup.policy", c.LogCleanupPolicy, []string{"delete"}},
		{"log.message.timestamp.type", c.LogMessageTimestampType, "CreateTime"},
		{"message.max.bytes", c.MessageMaxBytes, int32(1048588)},
		{"socket.request.max.bytes", c.SocketRequestMaxBytes, int32(104857600)},
		{"offsets.topic.num.partitions", c.OffsetsTopicNumPartitions, int32(50)},
		{"offsets.topic.replication.factor", c.OffsetsTopicReplicationFactor, int16(3)},
		{"offsets.retention.minutes", c.OffsetsRetention, 7 * 24 * time.Hour},
		{"group.initial.rebalance.delay.ms", c.GroupInitialRebalanceDelay, 3 * time.Second},
		{"group.min.session.timeout.ms", c.GroupMinSessionTimeout, 6 * time.Second},
		{"group.max.session.timeout.ms", c.GroupMaxSessionTimeout, 30 * time.Minute},
		{"group.max.size", c.GroupMaxSize, int32(math.MaxInt32)},
		{"min.insync.replicas", c.MinInsyncReplicas, int32(1)},
		{"unclean.leader.election.enable", c.UncleanLeaderElectionEnable, false},
		{"zookeeper.session.timeout.ms", c.ZookeeperSessionTimeout, 18 * time.Second},
		{"zookeeper.connection.timeout.ms", c.ZookeeperConnectionTimeout, 18 * time.Second},
		{"controlled.shutdown.enable", c.ControlledShutdownEnable, true},
		{"auto.leader.rebalance.enable", c.AutoLeaderRebalanceEnable, true},
		{"leader.imbalance.check.interval.seconds", c.LeaderImbalanceCheckInterval, 5 * time.Minute},
		{"leader.imbalance.per.broker.percentage", c.LeaderImbalancePerBrokerPercentage, int32(10)},
		{"replica.lag.time.max.ms", c.ReplicaLagTimeMax, 30 * time.Second},
		{"replica.fetch.wait.max.ms", c.ReplicaFetchWaitMax, 500 * time.Millisecond},
		{"replica.fetch.min.bytes", c.ReplicaFetchMinBytes, int32(1)},
		{"replica.fetch.max.bytes", c.ReplicaFetchMaxBytes, int32(1 << 20)},
		{"replica.fetch.response.max.bytes", c.ReplicaFetchResponseMaxBytes, int32(10 << 20)},
		{"replica.fetch.backoff.ms", c.ReplicaFetchBackoff, time.Second},
		{"replica.high.watermark.checkpoint.interval.ms", c.ReplicaHighWatermarkCheckpointInterval, 5 * time.Second},
		{"num.replica.fetchers", c.NumReplicaFetchers, int32(1)},
		{"connections.max.idle.ms", c.ConnectionsMaxIdle, 10 * time.Minute},
		{"metrics.listener", c.MetricsListener, ""},
		{"pprof.enable", c.PprofEnable, false},
		{"broker.probe.interval.ms", c.BrokerProbeInterval, 250 * time.Millisecond},
		{"replica.audit.interval.ms", c.ReplicaAuditInterval, 5 * time.Minute},
		{"replica.audit.max.bytes.per.sec", c.ReplicaAuditMaxBytesPerSec, int64(1 << 20)},
		{"inter.broker.protocol.version", c.InterBrokerProtocolVersion.String(), "3.9-IV0"},
		{"standalone", c.Standalone(), true},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: got %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if got, want := c.LogDefaults(), logstore.DefaultConfig(); got != want {
		t.Errorf("LogDefaults:\n got %+v\nwant %+v", got, want)
	}
}

func TestOverridesWin(t *testing.T) {
	c, _ := mustLoad(t, "num.partitions=3\nbroker.id=4\n", "num.partitions=5", "broker.id = 7", "broker.id=9")
	if c.NumPartitions != 5 || c.BrokerID != 9 {
		t.Fatalf("num.partitions=%d broker.id=%d, want 5 and 9", c.NumPartitions, c.BrokerID)
	}
	if !c.IsSet("num.partitions") || c.IsSet("message.max.bytes") {
		t.Fatal("IsSet wrong")
	}
	if _, _, err := Load(writeProps(t, ""), []string{"novalue"}); err == nil {
		t.Fatal("override without '=' accepted")
	}
}

func TestUnknownKeyWarns(t *testing.T) {
	c, warnings := mustLoad(t, "num.partitions=2\nno.such.key=1\nprocess.roles=broker\n")
	if c.NumPartitions != 2 {
		t.Fatal("known key lost")
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "no.such.key") || !strings.Contains(warnings[1], "process.roles") {
		t.Fatalf("warnings: %q", warnings)
	}
}

func TestKafkaSampleLoadsWithoutWarnings(t *testing.T) {
	// The keys of Apache Kafka's own config/server.properties (ZooKeeper mode).
	sample := `broker.id=0
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=kafka-logs
num.partitions=1
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.retention.check.interval.ms=300000
zookeeper.connect=localhost:2181
zookeeper.connection.timeout.ms=18000
group.initial.rebalance.delay.ms=0
`
	c, warnings := mustLoad(t, sample)
	if len(warnings) != 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	if c.Standalone() || c.ZookeeperConnect != "localhost:2181" {
		t.Fatal("zookeeper.connect not read")
	}
}

func TestBadValueNamesKey(t *testing.T) {
	tests := []struct{ key, value string }{
		{"num.partitions", "abc"},
		{"num.partitions", "0"},
		{"broker.id", "-2"},
		{"broker.id", "99999999999"},
		{"message.max.bytes", "1.5"},
		{"auto.create.topics.enable", "yes"},
		{"log.cleanup.policy", "delete,shred"},
		{"log.message.timestamp.type", "WallTime"},
		{"listeners", "PLAINTEXT//:9092"},
		{"listeners", "PLAINTEXT://:99999"},
		{"listeners", "PLAINTEXT://:9092,plaintext://:9093"},
		{"advertised.listeners", "PLAINTEXT://0.0.0.0:9092"},
		{"advertised.listeners", "OTHER://h:9092"},
		{"inter.broker.listener.name", "NOPE"},
		{"offsets.topic.replication.factor", "40000"},
		{"log.retention.ms", "soon"},
		{"log.segment.bytes", "3000000000"},
		{"min.insync.replicas", "0"},
		{"metrics.listener", "nocolon"},
		{"replica.fetch.wait.max.ms", "40000"},
		{"log.cleaner.min.cleanable.ratio", "1.5"},
		{"inter.broker.protocol.version", "4.0"},
		{"replica.selector.class", "com.example.MySelector"},
	}
	for _, tt := range tests {
		_, _, err := Load(writeProps(t, tt.key+"="+tt.value+"\n"), nil)
		if err == nil {
			t.Errorf("%s=%s: no error", tt.key, tt.value)
			continue
		}
		if !strings.Contains(err.Error(), tt.key) || !strings.Contains(err.Error(), tt.value) {
			t.Errorf("%s=%s: error %q does not name key and value", tt.key, tt.value, err)
		}
	}
}

// TestReplicaSelectorClass: unset by default (every consumer reads from
// the leader), and both of Kafka's selectors are taken by class name.
func TestReplicaSelectorClass(t *testing.T) {
	c, _ := mustLoad(t, "")
	if c.ReplicaSelectorClass != "" {
		t.Errorf("default replica.selector.class = %q, want unset", c.ReplicaSelectorClass)
	}
	for _, v := range []string{RackAwareReplicaSelectorClass, LeaderSelectorClass} {
		c, _ := mustLoad(t, "replica.selector.class="+v+"\n")
		if c.ReplicaSelectorClass != v {
			t.Errorf("replica.selector.class=%s read as %q", v, c.ReplicaSelectorClass)
		}
	}
}

func TestSecurityProtocols(t *testing.T) {
	_, _, err := Load(writeProps(t, "listeners=X://:9093\nlistener.security.protocol.map=X:KERBEROS\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "listener.security.protocol.map") || !strings.Contains(err.Error(), "KERBEROS") {
		t.Fatalf("unknown protocol: %v", err)
	}
	_, _, err = Load(writeProps(t, "listeners=INTERNAL://:9093\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "listener.security.protocol.map") {
		t.Fatalf("unmapped listener: %v", err)
	}
	c, _ := mustLoad(t, "listeners=INTERNAL://:9093,CLIENT://:9092\nlistener.security.protocol.map=INTERNAL:PLAINTEXT,CLIENT:PLAINTEXT\ninter.broker.listener.name=internal\n")
	if c.InterBrokerListenerName != "INTERNAL" {
		t.Fatalf("inter.broker.listener.name = %q", c.InterBrokerListenerName)
	}
	c, _ = mustLoad(t, "listeners=B://:9093,A://:9092\nlistener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT\n")
	if c.InterBrokerListenerName != "B" {
		t.Fatalf("default inter broker listener = %q, want the first", c.InterBrokerListenerName)
	}
}

func TestListenerSecurity(t *testing.T) {
	c, warnings := mustLoad(t, strings.Join([]string{
		"listeners=PLAINTEXT://:9092,SASL_SSL://:9093,SSL://:9094",
		"ssl.keystore.location=/k/default.p12",
		"ssl.keystore.password=secret",
		"listener.name.ssl.ssl.client.auth=required",
		"listener.name.sasl_ssl.ssl.keystore.location=/k/sasl.p12",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
		"listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"b\";",
		"listener.name.sasl_ssl.connections.max.reauth.ms=60000",
		"security.inter.broker.protocol=SASL_SSL",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.ssl.not.a.key=1",
	}, "\n")+"\n")
	if c.InterBrokerListenerName != "SASL_SSL" {
		t.Errorf("inter-broker listener %q, want SASL_SSL", c.InterBrokerListenerName)
	}
	s := c.ListenerSecurity("SASL_SSL")
	if s.Protocol != SASLSSL || s.SSL["ssl.keystore.location"] != "/k/sasl.p12" || s.SSL["ssl.keystore.password"] != "secret" || s.SSL["ssl.client.auth"] != "none" {
		t.Errorf("SASL_SSL security: %+v", s)
	}
	if len(s.SASLMechanisms) != 2 || s.JAAS["PLAIN"] == "" || s.JAAS["SCRAM-SHA-256"] != "" || s.ReauthMax != time.Minute || s.SASLMaxReceiveSize != 524288 {
		t.Errorf("SASL_SSL sasl: %+v", s)
	}
	if ssl := c.ListenerSecurity("SSL"); ssl.SSL["ssl.client.auth"] != "required" || ssl.SSL["ssl.keystore.location"] != "/k/default.p12" || ssl.ReauthMax != 0 {
		t.Errorf("SSL security: %+v", ssl)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "listener.name.ssl.not.a.key") {
		t.Errorf("warnings %q, want one for the unknown per-listener key", warnings)
	}
	for _, e := range c.BrokerConfigEntries() {
		if e.Name == "ssl.keystore.password" && !e.Sensitive {
			t.Errorf("ssl.keystore.password not sensitive")
		}
	}

	for _, bad := range []struct{ props, key string }{
		{"listeners=SASL_PLAINTEXT://:9092\n", "sasl.enabled.mechanisms"},
		{"listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=PLAIN\n", "sasl.mechanism.inter.broker.protocol"},
		{"listeners=PLAINTEXT://:9092\nauthorizer.class.name=com.example.Mine\n", "authorizer.class.name"},
		{"listeners=A://:9092\nlistener.security.protocol.map=A:PLAINTEXT\ninter.broker.listener.name=A\nsecurity.inter.broker.protocol=PLAINTEXT\n", "security.inter.broker.protocol"},
	} {
		if _, _, err := Load(writeProps(t, bad.props), nil); err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%q: error %v, want one naming %s", bad.props, err, bad.key)
		}
	}
	c, _ = mustLoad(t, "listeners=SASL_PLAINTEXT://:9092\nsasl.enabled.mechanisms=SCRAM-SHA-512\nsasl.mechanism.inter.broker.protocol=SCRAM-SHA-512\nsuper.users=User:admin; User:CN=broker,O=kb\nauthorizer.class.name=kafka.security.authorizer.AclAuthorizer\n")
	if got := c.SuperUsers(); len(got) != 2 || got[1] != "User:CN=broker,O=kb" || !c.AuthorizerEnabled() || c.SASLMechanismInterBroker() != "SCRAM-SHA-512" {
		t.Errorf("super users %q, authorizer %v, mechanism %s", got, c.AuthorizerEnabled(), c.SASLMechanismInterBroker())
	}
}

func TestBrokerIDMinusOne(t *testing.T) {
	if _, _, err := Load(writeProps(t, "broker.id=-1\n"), nil); err == nil || !strings.Contains(err.Error(), "broker.id") {
		t.Fatalf("standalone broker.id=-1: %v", err)
	}
	c, _ := mustLoad(t, "broker.id=-1\nzookeeper.connect=127.0.0.1:2181\n")
	if c.BrokerID != -1 {
		t.Fatal("broker.id=-1 with ZooKeeper refused")
	}
}

func TestRetentionPrecedence(t *testing.T) {
	tests := []struct {
		text string
		want time.Duration
	}{
		{"", 168 * time.Hour},
		{"log.retention.hours=1", time.Hour},
		{"log.retention.hours=1\nlog.retention.minutes=2", 2 * time.Minute},
		{"log.retention.hours=1\nlog.retention.minutes=2\nlog.retention.ms=3", 3 * time.Millisecond},
		{"log.retention.minutes=2\nlog.retention.ms=3", 3 * time.Millisecond},
		{"log.retention.ms=-1", -time.Millisecond},
		{"log.retention.hours=-5", -time.Millisecond},
		{"log.retention.ms=-1\nlog.retention.hours=1", -time.Millisecond},
	}
	for _, tt := range tests {
		c, _ := mustLoad(t, tt.text)
		if c.LogRetention != tt.want {
			t.Errorf("%q: got %v, want %v", tt.text, c.LogRetention, tt.want)
		}
		wantMs := tt.want.Milliseconds()
		if got := c.LogDefaults().RetentionMs; got != wantMs {
			t.Errorf("%q: LogDefaults().RetentionMs = %d, want %d", tt.text, got, wantMs)
		}
	}
	c, _ := mustLoad(t, "log.roll.hours=2\nlog.roll.ms=1000")
	if c.LogRoll != time.Second {
		t.Errorf("log.roll.ms did not win: %v", c.LogRoll)
	}
}

func TestListeners(t *testing.T) {
	tests := []struct {
		listeners, advertised string
		wantL, wantA          []Listener
	}{
		{"PLAINTEXT://:9092", "", []Listener{{"PLAINTEXT", "", 9092}}, []Listener{{"PLAINTEXT", "127.0.0.1", 9092}}},
		{"PLAINTEXT://0.0.0.0:9092", "", []Listener{{"PLAINTEXT", "0.0.0.0", 9092}}, []Listener{{"PLAINTEXT", "127.0.0.1", 9092}}},
		{"PLAINTEXT://10.1.2.3:9092", "", []Listener{{"PLAINTEXT", "10.1.2.3", 9092}}, []Listener{{"PLAINTEXT", "10.1.2.3", 9092}}},
		{"plaintext://[::1]:0", "", []Listener{{"PLAINTEXT", "::1", 0}}, []Listener{{"PLAINTEXT", "::1", 0}}},
		{"PLAINTEXT://:9092", "PLAINTEXT://kafka.example:19092", []Listener{{"PLAINTEXT", "", 9092}}, []Listener{{"PLAINTEXT", "kafka.example", 19092}}},
	}
	for _, tt := range tests {
		text := "listeners=" + tt.listeners + "\n"
		if tt.advertised != "" {
			text += "advertised.listeners=" + tt.advertised + "\n"
		}
		c, _ := mustLoad(t, text)
		if !reflect.DeepEqual(c.Listeners, tt.wantL) || !reflect.DeepEqual(c.AdvertisedListeners, tt.wantA) {
			t.Errorf("%q/%q: got %v / %v", tt.listeners, tt.advertised, c.Listeners, c.AdvertisedListeners)
		}
	}
	c, _ := mustLoad(t, "listeners=A://127.0.0.1:9092, B://[::1]:9093\nlistener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT\n")
	if len(c.Listeners) != 2 || c.Listeners[1].String() != "B://[::1]:9093" || c.Listeners[0].Addr() != "127.0.0.1:9092" {
		t.Fatalf("two listeners: %v", c.Listeners)
	}
}

func TestLogDirs(t *testing.T) {
	c, _ := mustLoad(t, "log.dir=/a\n")
	if !reflect.DeepEqual(c.LogDirs, []string{"/a"}) {
		t.Errorf("log.dir fallback: %v", c.LogDirs)
	}
	c, _ = mustLoad(t, "log.dir=/a\nlog.dirs=/b, /c\n")
	if !reflect.DeepEqual(c.LogDirs, []string{"/b", "/c"}) {
		t.Errorf("log.dirs: %v", c.LogDirs)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, _, err := Load(filepath.Join(t.TempDir(), "nope.properties"), nil); err == nil {
		t.Fatal("missing file accepted")
	}
}
