package compat

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clientListeners are the listeners of TestSecurityClients' broker: TLS
// with the broker's keystore in each of Kafka's three store types, SASL
// without and with TLS, mutual TLS, and TLS with an optional client
// certificate whose subject ssl.principal.mapping.rules shortens to its
// CN. Every TLS listener has its own
// listener.name.<l>.ssl.* keys: Kafka applies the unprefixed ssl.* keys to
// every listener, and a keystore password on a PEM listener is an error.
var clientListeners = []harness.Listener{
	{Name: "SSL", Protocol: "SSL"},
	{Name: "SSLJKS", Protocol: "SSL"},
	{Name: "SSLPEM", Protocol: "SSL"},
	{Name: "SASL_PLAINTEXT", Protocol: "SASL_PLAINTEXT"},
	{Name: "SASL_SSL", Protocol: "SASL_SSL"},
	{Name: "MTLS", Protocol: "SSL"},
	{Name: "MTLSMAP", Protocol: "SSL"},
}

func startClientsBroker(t *testing.T) *secured {
	t.Helper()
	return startSecured(t, clientListeners, func(p *harness.PKI) []string {
		o := p.BrokerSSL("SSL", "PKCS12")
		o = append(o, p.BrokerSSL("SSLJKS", "JKS")...)
		o = append(o, p.BrokerSSL("SASL_SSL", "PKCS12")...)
		o = append(o, p.BrokerSSL("MTLS", "PKCS12")...)
		o = append(o, p.BrokerSSL("SSLPEM", "PEM")...)
		o = append(o, p.BrokerSSL("MTLSMAP", "PKCS12")...)
		o = append(o, "listener.name.mtls.ssl.client.auth=required",
			"listener.name.mtlsmap.ssl.client.auth=requested",
			"listener.name.mtlsmap.ssl.principal.mapping.rules=RULE:^CN=([^,]*),OU=clients,.*$/$1/,DEFAULT")
		o = append(o, saslProps("SASL_PLAINTEXT", "SASL_SSL")...)
		// Topics without ACLs stay open to everyone, so that one broker
		// serves every client below and the mTLS case's ACL still bites.
		return append(o, aclProps(true)...)
	})
}

// TestSecurityClients drives kcat, the Java console producer and consumer,
// kafka-topics and franz-go over every security protocol and SASL
// mechanism, with SCRAM users made by kafka-configs, and mutual TLS where
// an ACL on the certificate's subject decides who reads a topic.
func TestSecurityClients(t *testing.T) {
	s := startClientsBroker(t)

	// The SCRAM cases below need these users.
	if !t.Run("scram-users", func(t *testing.T) {
		s.createScramUsers(t, "SASL_PLAINTEXT", "alice", "bob")
		out := s.tool(t, "SASL_PLAINTEXT", s.admin("SASL_PLAINTEXT"), "--command-config", "kafka-configs",
			"--describe", "--entity-type", "users")
		for _, u := range []string{"alice", "bob"} {
			want := fmt.Sprintf("SCRAM credential configs for user-principal '%s' are SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=4096", u)
			if !strings.Contains(out, want) {
				t.Errorf("kafka-configs --describe --entity-type users lacks %q:\n%s", want, out)
			}
		}
	}) {
		t.FailNow()
	}

	// Each case: kafka-topics creates the topic, kcat produces and reads
	// back, and (java) kafka-topics describes it and the console producer
	// and consumer do the same in a group; on SASL_SSL franz-go produces
	// and consumes too. Java runs are a JVM start each, hence the subset.
	cases := []struct {
		listener, mechanism, storeType string
		java                           bool
	}{
		{"SSL", "", "PKCS12", true},
		{"SSLJKS", "", "JKS", false},
		{"SSLPEM", "", "PEM", false},
		{"SASL_PLAINTEXT", "PLAIN", "", false},
		{"SASL_PLAINTEXT", "SCRAM-SHA-256", "", true},
		{"SASL_PLAINTEXT", "SCRAM-SHA-512", "", false},
		{"SASL_SSL", "PLAIN", "JKS", true},
		{"SASL_SSL", "SCRAM-SHA-256", "PEM", false},
		{"SASL_SSL", "SCRAM-SHA-512", "PKCS12", true},
	}
	for _, c := range cases {
		name := strings.ToLower(strings.Trim(c.listener+"-"+c.mechanism, "-"))
		t.Run(name, func(t *testing.T) {
			a := s.auth(c.listener, c.mechanism, "alice")
			a.StoreType = c.storeType
			topic := "sec-" + name
			s.tool(t, c.listener, a, "--command-config", "kafka-topics", "--create", "--topic", topic,
				"--partitions", "2", "--replication-factor", "1")
			if c.java {
				out := s.tool(t, c.listener, a, "--command-config", "kafka-topics", "--describe", "--topic", topic)
				if !strings.Contains(out, "PartitionCount: 2") {
					t.Fatalf("kafka-topics --describe %s:\n%s", topic, out)
				}
			}

			ctx := testCtx(t, time.Minute)
			in, want := lines("kcat-"+name, 50)
			if out, errOut, err := s.kcat(t, ctx, c.listener, a, in, "-P", "-t", topic, "-p", "0", "-X", "acks=all"); err != nil {
				t.Fatalf("kcat -P: %v\n%s\n%s", err, out, errOut)
			}
			out, errOut, err := s.kcat(t, ctx, c.listener, a, "", "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q")
			if err != nil {
				t.Fatalf("kcat -C: %v\n%s", err, errOut)
			}
			sameLines(t, "kcat -C", out, want)

			if c.java {
				in, want := lines("java-"+name, 200)
				jt := topic + "-java"
				if _, errOut, err := s.toolResult(t, &in, c.listener, a, "--producer.config", "kafka-console-producer",
					"--topic", jt, "--producer-property", "acks=all"); err != nil {
					t.Fatalf("kafka-console-producer: %v\n%s", err, tail(errOut, 3000))
				}
				out := s.tool(t, c.listener, a, "--consumer.config", "kafka-console-consumer", "--topic", jt,
					"--from-beginning", "--group", "g-"+name, "--max-messages", "200", "--timeout-ms", "60000")
				sameLines(t, "kafka-console-consumer", dropDeprecation(out), want)
			}

			if c.listener == "SASL_SSL" {
				kgoRoundTrip(t, s, c.listener, a, topic+"-kgo")
			}
		})
	}

	t.Run("mtls-acl", func(t *testing.T) { testMutualTLSACL(t, s) })
	t.Run("mapped-principal", func(t *testing.T) { testMappedPrincipal(t, s) })
}

// kgoRoundTrip produces 100 records with franz-go as a and reads them
// back in a group.
func kgoRoundTrip(t *testing.T, s *secured, listener string, a harness.ClientAuth, topic string) {
	t.Helper()
	cl := s.client(t, listener, a, kgo.AllowAutoTopicCreation())
	var recs []*kgo.Record
	for i := range 100 {
		recs = append(recs, &kgo.Record{Topic: topic, Value: seqValue(i)})
	}
	produceSync(t, cl, recs...)
	got := consumeN(t, s.addr(t, listener), topic, 100, time.Minute,
		append(s.pki.KgoOpts(t, a), kgo.ConsumerGroup("kgo-"+topic))...)
	for i, r := range got {
		if string(r.Value) != string(seqValue(i)) {
			t.Fatalf("record %d: %q, want %q", i, r.Value, seqValue(i))
		}
	}
}

// testMutualTLSACL: on the listener that requires client certificates,
// an ACL for alice's certificate subject lets alice read the topic and
// nobody else, bob's certificate from the same CA included.
func testMutualTLSACL(t *testing.T, s *secured) {
	const topic = "mtls-secret"
	admin := s.admin("SASL_SSL")
	cl := s.client(t, "SASL_SSL", admin, kgo.AllowAutoTopicCreation())
	var recs []*kgo.Record
	in, want := lines("secret", 5)
	for _, l := range strings.Fields(in) {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(l)})
	}
	produceSync(t, cl, recs...)

	alice, bob := s.pki.Clients["alice"], s.pki.Clients["bob"]
	s.tool(t, "SASL_PLAINTEXT", s.admin("SASL_PLAINTEXT"), "--command-config", "kafka-acls", "--add",
		"--allow-principal", "User:"+alice.Principal, "--operation", "Read", "--topic", topic)

	asAlice := harness.ClientAuth{Protocol: "SSL", Cert: alice}
	asBob := harness.ClientAuth{Protocol: "SSL", Cert: bob}
	// ACLs reach the authorizer's cache through a change notification on
	// Kafka; wait (bounded) until bob is refused.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code := topicMetadataError(t, s, "MTLS", asBob, topic)
		if code == kerr.TopicAuthorizationFailed.Code {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's Metadata for %s: error %d after the ACL, want TOPIC_AUTHORIZATION_FAILED", topic, code)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := topicMetadataError(t, s, "MTLS", asAlice, topic); code != 0 {
		t.Fatalf("alice's Metadata for %s: error %s", topic, kerr.ErrorForCode(code))
	}

	ctx := testCtx(t, time.Minute)
	out, errOut, err := s.kcat(t, ctx, "MTLS", asAlice, "", "-C", "-t", topic, "-o", "beginning", "-e", "-q")
	if err != nil {
		t.Fatalf("kcat -C as alice: %v\n%s", err, errOut)
	}
	sameLines(t, "kcat -C as alice", out, want)

	out, errOut, err = s.kcat(t, ctx, "MTLS", asBob, "", "-C", "-t", topic, "-o", "beginning", "-e", "-q")
	if err == nil || strings.Contains(out, "secret-") {
		t.Fatalf("kcat -C as bob read the topic (err %v):\n%s\n%s", err, out, errOut)
	}
	if !regexp.MustCompile(`(?i)topic authorization failed`).MatchString(errOut) {
		t.Errorf("kcat as bob: want a topic authorization failure, got:\n%s", errOut)
	}
}

// dropDeprecation removes the Kafka 4 console tools' notice that
// --consumer.config is deprecated, which they print on stdout.
func dropDeprecation(out string) string {
	var keep []string
	for _, l := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(l, "Option --") || !strings.Contains(l, " is deprecated") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// testMappedPrincipal: on the listener with ssl.client.auth=requested
// and a mapping rule, bob's certificate is User:bob, which an ACL lets
// read a topic; alice's certificate (User:alice) and no certificate at
// all (User:ANONYMOUS) connect but may not read it.
func testMappedPrincipal(t *testing.T, s *secured) {
	const topic = "mapped-secret"
	cl := s.client(t, "SASL_SSL", s.admin("SASL_SSL"), kgo.AllowAutoTopicCreation())
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: []byte("mapped-0")})
	s.tool(t, "SASL_PLAINTEXT", s.admin("SASL_PLAINTEXT"), "--command-config", "kafka-acls", "--add",
		"--allow-principal", "User:bob", "--operation", "Read", "--topic", topic)

	asBob := harness.ClientAuth{Protocol: "SSL", Cert: s.pki.Clients["bob"]}
	asAlice := harness.ClientAuth{Protocol: "SSL", Cert: s.pki.Clients["alice"]}
	anonymous := harness.ClientAuth{Protocol: "SSL"}
	eventually(t, "alice's certificate is refused "+topic, func() error {
		if code := topicMetadataError(t, s, "MTLSMAP", asAlice, topic); code != kerr.TopicAuthorizationFailed.Code {
			return fmt.Errorf("error %v, want TOPIC_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
		}
		return nil
	})
	if code := topicMetadataError(t, s, "MTLSMAP", anonymous, topic); code != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("no certificate: %s error %v, want TOPIC_AUTHORIZATION_FAILED", topic, kerr.ErrorForCode(code))
	}
	ctx := testCtx(t, time.Minute)
	out, errOut, err := s.kcat(t, ctx, "MTLSMAP", asBob, "", "-C", "-t", topic, "-o", "beginning", "-e", "-q")
	if err != nil {
		t.Fatalf("kcat -C as bob (User:bob by the mapping rule): %v\n%s", err, errOut)
	}
	sameLines(t, "kcat -C as bob", out, []string{"mapped-0"})
	// The same certificate on the listener without the rule is
	// User:CN=bob,..., which the ACL does not name.
	if code := topicMetadataError(t, s, "MTLS", asBob, topic); code != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("bob on MTLS (no mapping rule): %s error %v, want TOPIC_AUTHORIZATION_FAILED", topic, kerr.ErrorForCode(code))
	}
}

// TestSecurityReauthentication: with connections.max.reauth.ms set, a
// franz-go producer that keeps one connection busy for several session
// lifetimes re-authenticates on it (KIP-368) and never sees an error;
// kbroker counts the re-authentications.
func TestSecurityReauthentication(t *testing.T) {
	s := startSecured(t, []harness.Listener{{Name: "SASL_PLAINTEXT", Protocol: "SASL_PLAINTEXT"}},
		func(p *harness.PKI) []string {
			return append(saslProps("SASL_PLAINTEXT"), "connections.max.reauth.ms=1500")
		})
	s.createScramUsers(t, "SASL_PLAINTEXT", "alice")
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			before := listenerCounter(t, s, "successful_reauthentication_total", "SASL_PLAINTEXT")
			a := s.auth("SASL_PLAINTEXT", mech, "alice")
			topic := "reauth-" + strings.ToLower(mech)
			cl := s.client(t, "SASL_PLAINTEXT", a, kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic))
			deadline := time.Now().Add(5 * time.Second)
			n := 0
			for time.Now().Before(deadline) {
				produceSync(t, cl, &kgo.Record{Value: seqValue(n)})
				n++
				time.Sleep(100 * time.Millisecond)
			}
			got := consumeN(t, s.addr(t, "SASL_PLAINTEXT"), topic, n, time.Minute, s.pki.KgoOpts(t, a)...)
			for i, r := range got {
				if string(r.Value) != string(seqValue(i)) {
					t.Fatalf("record %d: %q", i, r.Value)
				}
			}
			if s.node.Kafka39() {
				return
			}
			if after := listenerCounter(t, s, "successful_reauthentication_total", "SASL_PLAINTEXT"); after < before+2 {
				t.Errorf("successful_reauthentication_total went from %v to %v over 5 s of 1.5 s sessions", before, after)
			}
		})
	}
}

// topicMetadataError is the error code of topic in a Metadata request
// sent as a on listener.
func topicMetadataError(t *testing.T, s *secured, listener string, a harness.ClientAuth, topic string) int16 {
	t.Helper()
	cl := s.client(t, listener, a)
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	ctx := testCtx(t, 15*time.Second)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("Metadata as %s on %s: %v", a.User, listener, err)
	}
	if len(resp.Topics) != 1 {
		t.Fatalf("Metadata: %d topics", len(resp.Topics))
	}
	return resp.Topics[0].ErrorCode
}
