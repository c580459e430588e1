package compat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclWait bounds how long a test waits for an ACL change to be in force
// (Kafka's own broker applies its changes at once; others learn of them
// through a change notification).
const aclWait = 20 * time.Second

// startACLBroker starts a broker whose only client listener is
// SASL_PLAINTEXT (PLAIN and SCRAM), with the authorizer denying what no
// ACL allows. The broker logs in to itself as admin (a super user) over
// that listener, as a ZooKeeper-mode Kafka controller must.
func startACLBroker(t *testing.T) *secured {
	t.Helper()
	return startSecured(t, []harness.Listener{{Name: "SASL_PLAINTEXT", Protocol: "SASL_PLAINTEXT"}},
		func(p *harness.PKI) []string {
			o := append(saslProps("SASL_PLAINTEXT"), aclProps(false)...)
			return append(o, "inter.broker.listener.name=SASL_PLAINTEXT", "sasl.mechanism.inter.broker.protocol=PLAIN")
		})
}

// TestSecurityACLs manages ACLs with kafka-acls (literal and prefixed
// patterns, allow and deny, topics, groups, the cluster, transactional
// ids) and checks with franz-go that each is enforced.
func TestSecurityACLs(t *testing.T) {
	s := startACLBroker(t)
	const l = "SASL_PLAINTEXT"
	admin, alice, bob := s.admin(l), s.auth(l, "PLAIN", "alice"), s.auth(l, "PLAIN", "bob")
	acls := func(t *testing.T, args ...string) string {
		t.Helper()
		return s.tool(t, l, admin, "--command-config", "kafka-acls", args...)
	}

	adm := s.client(t, l, admin)
	for _, topic := range []string{"acl-orders", "acl-logs-app", "acl-logs-secret"} {
		createTopicWith(t, adm, topic)
	}
	produceSync(t, adm,
		&kgo.Record{Topic: "acl-logs-app", Value: []byte("app-0")},
		&kgo.Record{Topic: "acl-logs-app", Value: []byte("app-1")},
		&kgo.Record{Topic: "acl-logs-secret", Value: []byte("secret-0")})

	t.Run("literal-topic", func(t *testing.T) {
		out := acls(t, "--add", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "acl-orders")
		wantACL(t, out, "TOPIC", "acl-orders", "LITERAL", "User:alice", "WRITE", "ALLOW")
		out = acls(t, "--list", "--topic", "acl-orders")
		wantACL(t, out, "TOPIC", "acl-orders", "LITERAL", "User:alice", "WRITE", "ALLOW")

		eventually(t, "alice produces to acl-orders", func() error { return produceAs(t, s, l, alice, "acl-orders") })
		if err := produceAs(t, s, l, bob, "acl-orders"); !isKafkaError(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("bob produces to acl-orders: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
		// WRITE implies DESCRIBE but not READ.
		if err := readAs(t, s, l, alice, "acl-orders", "", 1); !isKafkaError(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("alice reads acl-orders: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
	})

	t.Run("prefixed-topic-and-group", func(t *testing.T) {
		out := acls(t, "--add", "--allow-principal", "User:alice", "--operation", "Read",
			"--topic", "acl-logs-", "--group", "acl-g-", "--resource-pattern-type", "prefixed")
		wantACL(t, out, "TOPIC", "acl-logs-", "PREFIXED", "User:alice", "READ", "ALLOW")
		wantACL(t, out, "GROUP", "acl-g-", "PREFIXED", "User:alice", "READ", "ALLOW")

		eventually(t, "alice reads acl-logs-app in group acl-g-1", func() error {
			return readAs(t, s, l, alice, "acl-logs-app", "acl-g-1", 2)
		})
		if err := readAs(t, s, l, alice, "acl-logs-app", "other-group", 2); !isKafkaError(err, kerr.GroupAuthorizationFailed) {
			t.Errorf("alice reads in group other-group: %v, want GROUP_AUTHORIZATION_FAILED", err)
		}
		if err := readAs(t, s, l, bob, "acl-logs-app", "", 2); !isKafkaError(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("bob reads acl-logs-app: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
	})

	t.Run("deny-overrides-allow", func(t *testing.T) {
		if err := readAs(t, s, l, alice, "acl-logs-secret", "acl-g-2", 1); err != nil {
			t.Fatalf("alice reads acl-logs-secret before the deny: %v", err)
		}
		acls(t, "--add", "--deny-principal", "User:alice", "--operation", "Read", "--topic", "acl-logs-secret")
		out := acls(t, "--list", "--topic", "acl-logs-secret", "--resource-pattern-type", "match")
		wantACL(t, out, "TOPIC", "acl-logs-secret", "LITERAL", "User:alice", "READ", "DENY")
		wantACL(t, out, "TOPIC", "acl-logs-", "PREFIXED", "User:alice", "READ", "ALLOW")
		eventually(t, "alice is refused acl-logs-secret", func() error {
			if err := readAs(t, s, l, alice, "acl-logs-secret", "acl-g-3", 1); !isKafkaError(err, kerr.TopicAuthorizationFailed) {
				return fmt.Errorf("read: %v, want TOPIC_AUTHORIZATION_FAILED", err)
			}
			return nil
		})
		// The deny names one topic; the prefix still allows the others.
		if err := readAs(t, s, l, alice, "acl-logs-app", "acl-g-3", 2); err != nil {
			t.Errorf("alice reads acl-logs-app after the deny: %v", err)
		}
	})

	t.Run("super-user", func(t *testing.T) {
		if err := readAs(t, s, l, admin, "acl-logs-secret", "any-group", 1); err != nil {
			t.Errorf("admin (super user) reads acl-logs-secret: %v", err)
		}
	})

	t.Run("cluster", func(t *testing.T) {
		if err := createTopicAs(t, s, l, bob, "acl-bob-1"); !isKafkaError(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("bob creates a topic without CREATE: %v, want TOPIC_AUTHORIZATION_FAILED", err)
		}
		out := acls(t, "--add", "--allow-principal", "User:bob", "--operation", "Create", "--cluster")
		wantACL(t, out, "CLUSTER", "kafka-cluster", "LITERAL", "User:bob", "CREATE", "ALLOW")
		eventually(t, "bob creates acl-bob-2", func() error { return createTopicAs(t, s, l, bob, "acl-bob-2") })
	})

	t.Run("transactional-id", func(t *testing.T) {
		if err := initTxnAs(t, s, l, alice, "acl-tx"); !isKafkaError(err, kerr.TransactionalIDAuthorizationFailed) {
			t.Errorf("alice's InitProducerId for acl-tx without an ACL: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
		}
		out := acls(t, "--add", "--allow-principal", "User:alice", "--operation", "Write", "--transactional-id", "acl-tx")
		wantACL(t, out, "TRANSACTIONAL_ID", "acl-tx", "LITERAL", "User:alice", "WRITE", "ALLOW")
		eventually(t, "alice's InitProducerId for acl-tx", func() error { return initTxnAs(t, s, l, alice, "acl-tx") })
		if err := initTxnAs(t, s, l, alice, "acl-tx-other"); !isKafkaError(err, kerr.TransactionalIDAuthorizationFailed) {
			t.Errorf("alice's InitProducerId for acl-tx-other: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
		}
	})

	t.Run("remove", func(t *testing.T) {
		acls(t, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--topic", "acl-orders")
		out := acls(t, "--list", "--topic", "acl-orders")
		if strings.Contains(out, "User:alice") {
			t.Errorf("kafka-acls --list after --remove still shows alice:\n%s", out)
		}
		eventually(t, "alice is refused acl-orders", func() error {
			if err := produceAs(t, s, l, alice, "acl-orders"); !isKafkaError(err, kerr.TopicAuthorizationFailed) {
				return fmt.Errorf("produce: %v, want TOPIC_AUTHORIZATION_FAILED", err)
			}
			return nil
		})
	})

	t.Run("not-authorized-to-manage", func(t *testing.T) {
		out, errOut, err := s.toolResult(t, nil, l, alice, "--command-config", "kafka-acls", "--add",
			"--allow-principal", "User:alice", "--operation", "All", "--topic", "*")
		if err == nil && !strings.Contains(out+errOut, "ClusterAuthorizationException") {
			t.Fatalf("alice added an ACL:\n%s\n%s", out, errOut)
		}
		if !strings.Contains(out+errOut, "ClusterAuthorizationException") {
			t.Errorf("kafka-acls as alice: want ClusterAuthorizationException, got:\n%s\n%s", out, tail(errOut, 2000))
		}
	})
}

// wantACL checks that kafka-acls printed the ACL under its resource: in
// the "Adding ACLs for resource" section of --add or the "Current ACLs
// for resource" one of --list.
func wantACL(t *testing.T, out, resourceType, name, patternType, principal, op, perm string) {
	t.Helper()
	res := fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", resourceType, name, patternType)
	acl := fmt.Sprintf("(principal=%s, host=*, operation=%s, permissionType=%s)", principal, op, perm)
	for _, section := range strings.Split(out, " ACLs for resource `")[1:] {
		if strings.HasPrefix(section, res) && strings.Contains(section, acl) {
			return
		}
	}
	t.Errorf("kafka-acls output lacks %s under %s:\n%s", acl, res, out)
}

// eventually retries check until it returns nil, for at most aclWait.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(aclWait)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %v after %v", what, err, aclWait)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// createTopicWith creates a one-partition topic through cl.
func createTopicWith(t *testing.T, cl *kgo.Client, topic string) {
	t.Helper()
	if err := createTopicErr(t, cl, topic); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

func createTopicErr(t *testing.T, cl *kgo.Client, topic string) error {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, -1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 15000
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("CreateTopics: %d topics in the answer", len(resp.Topics))
	}
	return kerr.ErrorForCode(resp.Topics[0].ErrorCode)
}

// createTopicAs creates a topic as a on a fresh client.
func createTopicAs(t *testing.T, s *secured, listener string, a harness.ClientAuth, topic string) error {
	t.Helper()
	return createTopicErr(t, s.client(t, listener, a), topic)
}

// produceAs produces one record to topic as a, without idempotence (so
// that a missing IDEMPOTENT_WRITE is not what fails) and without retries.
func produceAs(t *testing.T, s *secured, listener string, a harness.ClientAuth, topic string) error {
	t.Helper()
	cl := s.client(t, listener, a, kgo.DisableIdempotentWrite(), kgo.RecordRetries(1),
		kgo.RecordDeliveryTimeout(10*time.Second))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

// readAs consumes topic from the start as a, in group when one is named,
// until n records arrived (nil) or a fetch or group error shows (that
// error), within 15 s.
func readAs(t *testing.T, s *secured, listener string, a harness.ClientAuth, topic, group string, n int) error {
	t.Helper()
	opts := []kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if group != "" {
		opts = append(opts, kgo.ConsumerGroup(group))
	}
	cl := s.client(t, listener, a, opts...)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("read %d of %d records of %s within 15s", got, n, topic)
		}
		var first error
		fs.EachError(func(_ string, _ int32, err error) {
			if first == nil && !errors.Is(err, context.DeadlineExceeded) {
				first = err
			}
		})
		if first != nil {
			return first
		}
		got += fs.NumRecords()
	}
	return nil
}

// initTxnAs sends InitProducerId for transactional id txn as a.
func initTxnAs(t *testing.T, s *secured, listener string, a harness.ClientAuth, txn string) error {
	t.Helper()
	cl := s.client(t, listener, a)
	defer cl.Close()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = kmsg.StringPtr(txn)
	req.TransactionTimeoutMillis = 60000
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.ErrorCode)
}
