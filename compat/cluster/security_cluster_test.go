package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KBROKER_ORACLE=kafka39 runs TestSecureCluster against three Apache
// Kafka 3.9.1 brokers (ZooKeeper mode, compat/lib39) with the same
// settings: the check that the test's expectations are Kafka's.
func againstKafka39(t *testing.T) bool {
	t.Helper()
	switch v := os.Getenv("KBROKER_ORACLE"); v {
	case "":
		return false
	case "kafka39":
		return true
	default:
		t.Fatalf("KBROKER_ORACLE=%q: the only oracle is kafka39", v)
		return false
	}
}

// secUsers are the PLAIN users of both SASL listeners; admin is also
// what the brokers log in to each other as, and the only super user.
var secUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret"}

// TestSecureCluster runs three brokers that replicate over SASL_SSL
// (PLAIN as admin, certificates checked against 127.0.0.1) with the ACL
// authorizer on, and clients on a second SASL_SSL listener with
// SCRAM-SHA-512: a SCRAM user made through one broker authenticates on
// all, an ACL added through one broker is enforced by the others within
// seconds, and an acks=all producer keeps every record across a SIGKILL
// of the partition leader, whose restart brings it back into the ISR.
func TestSecureCluster(t *testing.T) {
	pki := harness.NewPKI(t)
	overrides := append(pki.BrokerSSL("", "PKCS12"),
		"ssl.endpoint.identification.algorithm=https",
		"inter.broker.listener.name=INTERNAL",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
		"super.users=User:admin",
		"allow.everyone.if.no.acl.found=false",
		"min.insync.replicas=2")
	for _, l := range []string{"internal", "client"} {
		overrides = append(overrides,
			"listener.name."+l+".plain.sasl.jaas.config="+harness.PlainJAAS("admin", secUsers["admin"], secUsers),
			"listener.name."+l+".scram-sha-256.sasl.jaas.config="+harness.ScramJAAS("admin", secUsers["admin"]),
			"listener.name."+l+".scram-sha-512.sasl.jaas.config="+harness.ScramJAAS("admin", secUsers["admin"]))
	}
	c := harness.StartSecureCluster(t, 3, harness.SecureOptions{
		Kafka39: againstKafka39(t),
		Listeners: []harness.Listener{
			{Name: "INTERNAL", Protocol: "SASL_SSL"},
			{Name: "CLIENT", Protocol: "SASL_SSL"},
		},
		Overrides: overrides,
	})
	admin := harness.ClientAuth{Protocol: "SASL_SSL", Mechanism: "PLAIN", User: "admin", Password: secUsers["admin"]}
	alice := harness.ClientAuth{Protocol: "SASL_SSL", Mechanism: "SCRAM-SHA-512", User: "alice", Password: secUsers["alice"]}
	clientAddr := func(n *harness.SecureNode) string { return n.Listeners["CLIENT"] }
	var seeds []string
	for _, n := range c.Nodes {
		seeds = append(seeds, clientAddr(n))
	}
	tool := func(t *testing.T, via *harness.SecureNode, name string, args ...string) string {
		t.Helper()
		ctx := testCtx(t, 2*time.Minute)
		out, errOut, err := harness.RunTool(t, ctx, name, append([]string{"--bootstrap-server", clientAddr(via),
			"--command-config", pki.JavaProps(t, admin)}, args...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", name, err, out, errOut)
		}
		return out
	}

	// Each step needs the one before: stop at the first that fails.
	step := func(name string, f func(t *testing.T)) {
		t.Helper()
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	step("advertised-listener", func(t *testing.T) {
		// Metadata over CLIENT lists every broker at its CLIENT address.
		resp := secureMetadataFrom(t, pki, admin, clientAddr(c.Nodes[0]))
		var got []string
		for _, b := range resp.Brokers {
			got = append(got, fmt.Sprintf("%s:%d", b.Host, b.Port))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(seeds))
		if !slices.Equal(got, want) {
			t.Fatalf("Metadata over CLIENT lists %v, want %v", got, want)
		}
	})

	step("registration", func(t *testing.T) {
		// /brokers/ids/<id> carries every listener and its protocol, as
		// Kafka's BrokerInfo writes them (version 4 and later).
		conn := c.ZK.Connect(t)
		for _, n := range c.Nodes {
			data, _, err := conn.Get(fmt.Sprintf("/brokers/ids/%d", n.ID))
			if err != nil {
				t.Fatal(err)
			}
			var reg struct {
				Endpoints   []string          `json:"endpoints"`
				ProtocolMap map[string]string `json:"listener_security_protocol_map"`
			}
			if err := json.Unmarshal(data, &reg); err != nil {
				t.Fatalf("/brokers/ids/%d %s: %v", n.ID, data, err)
			}
			want := []string{"PLAINTEXT://" + n.Addr, "INTERNAL://" + n.Listeners["INTERNAL"], "CLIENT://" + n.Listeners["CLIENT"]}
			got := slices.Sorted(slices.Values(reg.Endpoints))
			if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				t.Errorf("/brokers/ids/%d endpoints %v, want %v", n.ID, got, want)
			}
			for l, proto := range map[string]string{"PLAINTEXT": "PLAINTEXT", "INTERNAL": "SASL_SSL", "CLIENT": "SASL_SSL"} {
				if reg.ProtocolMap[l] != proto {
					t.Errorf("/brokers/ids/%d listener_security_protocol_map[%s] = %q, want %s (%s)", n.ID, l, reg.ProtocolMap[l], proto, data)
				}
			}
		}
	})

	const topic = "sec-replicated"
	step("scram-user-through-one-broker", func(t *testing.T) {
		tool(t, c.Nodes[0], "kafka-configs", "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password="+secUsers["alice"]+"]",
			"--entity-type", "users", "--entity-name", "alice")
		for _, n := range c.Nodes {
			waitUntil(t, 30*time.Second, fmt.Sprintf("alice authenticates on broker %d", n.ID), func() error {
				return securePing(t, pki, alice, clientAddr(n))
			})
		}
	})

	step("acl-through-one-broker", func(t *testing.T) {
		adm := newClient(t, seeds, pki.KgoOpts(t, admin)...)
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 3
		req.Topics = append(req.Topics, rt)
		req.TimeoutMillis = 30000
		resp, err := req.RequestWith(testCtx(t, 40*time.Second), adm)
		if err != nil || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("create %s: %v %v", topic, err, resp)
		}
		for _, n := range c.Nodes {
			if code := secureTopicError(t, pki, alice, clientAddr(n), topic); code != kerr.TopicAuthorizationFailed.Code {
				t.Fatalf("broker %d before the ACL: alice sees %s with error %d, want TOPIC_AUTHORIZATION_FAILED", n.ID, topic, code)
			}
		}
		tool(t, c.Nodes[0], "kafka-acls", "--add", "--allow-principal", "User:alice",
			"--operation", "Write", "--operation", "Read", "--topic", topic)
		tool(t, c.Nodes[0], "kafka-acls", "--add", "--allow-principal", "User:alice",
			"--operation", "Read", "--group", "sec-g")
		for _, n := range c.Nodes[1:] {
			waitUntil(t, 10*time.Second, fmt.Sprintf("broker %d enforces the ACL added through broker %d", n.ID, c.Nodes[0].ID), func() error {
				if code := secureTopicError(t, pki, alice, clientAddr(n), topic); code != 0 {
					return kerr.ErrorForCode(code)
				}
				return nil
			})
		}
	})

	step("leader-killed-and-restarted", func(t *testing.T) {
		cl := newClient(t, seeds, append(pki.KgoOpts(t, alice), kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()))...)
		produceN(t, cl, "before", 200)
		waitISR(t, pki, admin, seeds, topic, 3)
		leader := c.Node(partitionLeader(t, pki, admin, seeds, topic))
		leader.Kill()
		var live []string
		for _, n := range c.Nodes {
			if n != leader {
				live = append(live, clientAddr(n))
			}
		}
		waitISR(t, pki, admin, live, topic, 2)
		produceN(t, cl, "during", 200)
		c.Restart(t, leader)
		waitISR(t, pki, admin, seeds, topic, 3)
		produceN(t, cl, "after", 200)

		cons := newClient(t, seeds, append(pki.KgoOpts(t, alice), kgo.ConsumeTopics(topic),
			kgo.ConsumerGroup("sec-g"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
		seen := map[string]bool{}
		ctx := testCtx(t, time.Minute)
		for len(seen) < 600 && ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			fs.EachError(func(tp string, p int32, err error) {
				if ctx.Err() == nil {
					t.Errorf("fetch %s/%d: %v", tp, p, err)
				}
			})
			fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
		}
		for _, prefix := range []string{"before", "during", "after"} {
			for i := range 200 {
				if v := fmt.Sprintf("%s-%d", prefix, i); !seen[v] {
					t.Fatalf("record %s lost (read %d distinct of 600)", v, len(seen))
				}
			}
		}
		// Replication and the controller's requests came in over INTERNAL,
		// authenticated (kbroker's metrics; Kafka's are JMX only).
		for _, n := range c.Nodes {
			if n.Kafka39() {
				continue
			}
			v, _, err := harness.ScrapeMetric(n.MetricsAddr, "kafka_server_socket_server_metrics_successful_authentication_total", `listener="INTERNAL"`)
			if err != nil || v == 0 {
				t.Errorf("broker %d: successful_authentication_total{listener=\"INTERNAL\"} = %v (%v), want > 0", n.ID, v, err)
			}
		}
	})
}

// secureClient is a client of exactly the broker at addr.
func secureClient(t *testing.T, pki *harness.PKI, a harness.ClientAuth, addr string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(pki.KgoOpts(t, a), kgo.SeedBrokers(addr), kgo.RequestRetries(0),
		kgo.DialTimeout(3*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// securePing authenticates on the broker at addr as a and sends Metadata.
func securePing(t *testing.T, pki *harness.PKI, a harness.ClientAuth, addr string) error {
	t.Helper()
	cl := secureClient(t, pki, a, addr)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cl.SeedBrokers()[0].Request(ctx, kmsg.NewPtrMetadataRequest())
	return err
}

// secureMetadataFrom is Metadata from exactly the broker at addr, as a,
// for the topics named (all without).
func secureMetadataFrom(t *testing.T, pki *harness.PKI, a harness.ClientAuth, addr string, topics ...string) *kmsg.MetadataResponse {
	t.Helper()
	cl := secureClient(t, pki, a, addr)
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("Metadata from %s as %s: %v", addr, a.User, err)
	}
	return resp.(*kmsg.MetadataResponse)
}

// secureTopicError is topic's error code in Metadata from the broker at
// addr, as a.
func secureTopicError(t *testing.T, pki *harness.PKI, a harness.ClientAuth, addr, topic string) int16 {
	t.Helper()
	resp := secureMetadataFrom(t, pki, a, addr, topic)
	if len(resp.Topics) != 1 {
		t.Fatalf("Metadata from %s: %d topics", addr, len(resp.Topics))
	}
	return resp.Topics[0].ErrorCode
}

// partitionLeader is the leader of topic's partition 0, as the first
// broker in addrs sees it.
func partitionLeader(t *testing.T, pki *harness.PKI, a harness.ClientAuth, addrs []string, topic string) int32 {
	t.Helper()
	resp := secureMetadataFrom(t, pki, a, addrs[0], topic)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("Metadata for %s: %+v", topic, resp.Topics)
	}
	return resp.Topics[0].Partitions[0].Leader
}

// waitISR waits until every broker in addrs reports an ISR of n replicas
// for topic's partition 0 over its secured listener.
func waitISR(t *testing.T, pki *harness.PKI, a harness.ClientAuth, addrs []string, topic string, n int) {
	t.Helper()
	waitUntil(t, 60*time.Second, fmt.Sprintf("ISR of %s/0 has %d replicas", topic, n), func() error {
		for _, addr := range addrs {
			resp := secureMetadataFrom(t, pki, a, addr, topic)
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				return fmt.Errorf("%s: Metadata %+v", addr, resp.Topics)
			}
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || len(p.ISR) != n || p.Leader < 0 {
				return fmt.Errorf("%s: leader %d ISR %v error %v", addr, p.Leader, p.ISR, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		return nil
	})
}
