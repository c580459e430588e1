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
)

// The security tests run against kbroker; with KBROKER_ORACLE=kafka39
// the same tests run against Apache Kafka 3.9.1 with the same settings,
// which is how their expectations were checked. Nothing is recorded:
// every expectation is in the test itself.

// PLAIN users every SASL listener of the tests accepts; admin is also the
// broker's own login and a super user wherever an authorizer runs.
var plainUsers = map[string]string{
	"admin": "admin-secret",
	"alice": "alice-secret",
	"bob":   "bob-secret",
}

// scramMechanisms are the SASL mechanisms with credentials in the
// metadata store.
var scramMechanisms = []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}

// saslProps enable PLAIN and both SCRAMs and give each named listener the
// JAAS configuration of each mechanism (Kafka wants one per mechanism and
// listener when no JAAS file is used).
func saslProps(listeners ...string) []string {
	props := []string{"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"}
	for _, l := range listeners {
		prefix := "listener.name." + strings.ToLower(l) + "."
		props = append(props,
			prefix+"plain.sasl.jaas.config="+harness.PlainJAAS("admin", plainUsers["admin"], plainUsers),
			prefix+"scram-sha-256.sasl.jaas.config="+harness.ScramJAAS("admin", plainUsers["admin"]),
			prefix+"scram-sha-512.sasl.jaas.config="+harness.ScramJAAS("admin", plainUsers["admin"]))
	}
	return props
}

// aclProps turn on Kafka's ZooKeeper-mode authorizer with admin as the
// only super user (plus extra ones).
func aclProps(allowIfNoACL bool, superUsers ...string) []string {
	return []string{
		"authorizer.class.name=kafka.security.authorizer.AclAuthorizer",
		"super.users=" + strings.Join(append([]string{"User:admin"}, superUsers...), ";"),
		fmt.Sprintf("allow.everyone.if.no.acl.found=%v", allowIfNoACL),
	}
}

// secured is a started secured broker with its PKI and the protocol of
// each of its listeners.
type secured struct {
	node      *harness.SecureNode
	pki       *harness.PKI
	protocols map[string]string
}

// startSecured starts kbroker, or Kafka 3.9.1 under KBROKER_ORACLE=kafka39,
// with the listeners and overrides given; build makes the overrides from
// the PKI.
func startSecured(t *testing.T, listeners []harness.Listener, build func(p *harness.PKI) []string) *secured {
	t.Helper()
	pki := harness.NewPKI(t)
	node := harness.StartSecureBroker(t, harness.SecureOptions{
		Kafka39:   recordingKafka39(t),
		Listeners: listeners,
		Overrides: build(pki),
	})
	s := &secured{node: node, pki: pki, protocols: map[string]string{}}
	for _, l := range listeners {
		s.protocols[l.Name] = l.Protocol
	}
	return s
}

// addr is the host:port of a secured listener.
func (s *secured) addr(t *testing.T, listener string) string {
	t.Helper()
	a := s.node.Listeners[listener]
	if a == "" {
		t.Fatalf("no listener %s", listener)
	}
	return a
}

// auth is how user connects to listener with mechanism ("" on SSL
// listeners); the password is the PLAIN one, which the tests also give
// the SCRAM credentials.
func (s *secured) auth(listener, mechanism, user string) harness.ClientAuth {
	return harness.ClientAuth{
		Protocol:  s.protocols[listener],
		Mechanism: mechanism,
		User:      user,
		Password:  plainUsers[user],
	}
}

// admin is the super user over a SASL listener with PLAIN.
func (s *secured) admin(listener string) harness.ClientAuth {
	return s.auth(listener, "PLAIN", "admin")
}

// client is a franz-go client connecting to listener as a.
func (s *secured) client(t *testing.T, listener string, a harness.ClientAuth, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, s.addr(t, listener), append(s.pki.KgoOpts(t, a), opts...)...)
}

// tool runs a Kafka command-line tool against listener as a: a's
// properties go to configFlag (--command-config, --producer.config, ...).
// It fails the test when the tool fails.
func (s *secured) tool(t *testing.T, listener string, a harness.ClientAuth, configFlag, name string, args ...string) string {
	t.Helper()
	out, errOut, err := s.toolResult(t, nil, listener, a, configFlag, name, args...)
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", name, err, tail(out, 3000), tail(errOut, 3000))
	}
	return out
}

// toolResult runs a tool as tool does and returns what it printed and
// how it exited; input, when set, is its stdin.
func (s *secured) toolResult(t *testing.T, input *string, listener string, a harness.ClientAuth, configFlag, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx := testCtx(t, 2*time.Minute)
	full := append([]string{"--bootstrap-server", s.addr(t, listener), configFlag, s.pki.JavaProps(t, a)}, args...)
	if input != nil {
		return harness.RunToolInput(t, ctx, strings.NewReader(*input), name, full...)
	}
	return harness.RunTool(t, ctx, name, full...)
}

// kcat runs kcat against listener as a with stdin in ("" for none).
func (s *secured) kcat(t *testing.T, ctx context.Context, listener string, a harness.ClientAuth, in string, args ...string) (string, string, error) {
	t.Helper()
	full := append(append([]string{"-b", s.addr(t, listener)}, s.pki.KcatArgs(a)...), args...)
	if in == "" {
		return harness.Kcat(t, ctx, nil, full...)
	}
	return harness.Kcat(t, ctx, strings.NewReader(in), full...)
}

// createScramUsers gives each user a SCRAM-SHA-256 credential (4096
// iterations) and a SCRAM-SHA-512 one (the default 4096) with its PLAIN
// password, through kafka-configs (AlterUserScramCredentials) as admin
// on listener, then waits until every one of them can authenticate there
// with either mechanism: credentials reach a broker's cache through a
// change notification.
func (s *secured) createScramUsers(t *testing.T, listener string, users ...string) {
	t.Helper()
	for _, u := range users {
		s.tool(t, listener, s.admin(listener), "--command-config", "kafka-configs", "--alter",
			"--add-config", fmt.Sprintf("SCRAM-SHA-256=[iterations=4096,password=%[1]s],SCRAM-SHA-512=[password=%[1]s]", plainUsers[u]),
			"--entity-type", "users", "--entity-name", u)
	}
	for _, u := range users {
		for _, mech := range scramMechanisms {
			waitAuthenticates(t, s, listener, s.auth(listener, mech, u))
		}
	}
}

// waitAuthenticates waits (bounded) until a can authenticate on listener.
func waitAuthenticates(t *testing.T, s *secured, listener string, a harness.ClientAuth) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = pingAs(t, s, listener, a); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s as %s (%s) does not authenticate: %v", listener, a.User, a.Mechanism, err)
}

// pingAs opens one fresh connection on listener as a and sends a
// Metadata request: nil when the broker authenticated the client.
func pingAs(t *testing.T, s *secured, listener string, a harness.ClientAuth) error {
	t.Helper()
	cl, err := kgo.NewClient(append(s.pki.KgoOpts(t, a), kgo.SeedBrokers(s.addr(t, listener)),
		kgo.RequestRetries(0), kgo.DialTimeout(3*time.Second))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.Ping(ctx)
}

// isKafkaError reports whether err is (or wraps) the Kafka error want.
func isKafkaError(err error, want *kerr.Error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && ke.Code == want.Code
}

// lines is the text of records, one a line, as the console tools and
// kcat print them.
func lines(prefix string, n int) (string, []string) {
	var b strings.Builder
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("%s-%04d", prefix, i)
		b.WriteString(want[i] + "\n")
	}
	return b.String(), want
}

// sameLines checks that out holds exactly want, in order.
func sameLines(t *testing.T, what, out string, want []string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: got %d lines (first %q), want %d (first %q):\n%s", what, len(got), got[0], len(want), want[0], tail(out, 1500))
	}
}
