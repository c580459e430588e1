package server

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
)

// The authorization matrix: for every API this broker serves, what Kafka
// 3.9's KafkaApis (ZooKeeper mode) answers a principal without ACLs, one
// ACL short of what the API needs, with exactly those ACLs, with each of
// the other ACL sets Kafka accepts instead, with an explicit DENY next to
// the ALLOW, and as a super user. A denied principal must get Kafka's
// error code and none of the data; an allowed one must get a real answer.
// Every served API key needs a row: a new API does not pass until it says
// how it is authorized.
//
// The ACLs are granted through CreateAcls as the super user, each phase to
// a principal of its own; a row stops at its first failing phase. The rows
// are in authorize_rows_*_test.go by area, the broker and its requests in
// authorize_harness_test.go; authorize_order_test.go holds what Kafka
// checks before it authorizes.

// notRequired marks, in authzCase.codes, an ACL without which Kafka still
// answers successfully and only leaves something out of the answer; the
// "one ACL short" phase is not run for it.
const notRequired int16 = -1

// authzCase is one row of the matrix.
type authzCase struct {
	name    string
	key     int16
	version int16
	// acls is exactly what Kafka requires; nil for an API Kafka does not
	// authorize (every phase then expects the same answer).
	acls []aclSpec
	// codes[i] is Kafka's answer when acls[i] is the first one missing;
	// a single entry applies to every ACL.
	codes []int16
	// alternatives are other ACL sets Kafka accepts in place of acls.
	alternatives [][]aclSpec
	// notEnough are ACL sets that look close but that Kafka refuses.
	notEnough []authzShortfall
	// deny is added next to acls in the deny phase (default: the DENY
	// twin of acls[0]); denyCode is Kafka's answer then (default codes[0]).
	deny     []aclSpec
	denyCode *int16
	// build returns the request of one phase; it may prepare what the
	// phase needs (as the super user) and note it in ph.
	build func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request
	// check judges the answer: ph.denied says whether Kafka refuses the
	// phase, ph.code with what.
	check func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response)
}

type authzShortfall struct {
	acls []aclSpec
	code int16
}

// authzPhase is one attempt of a row.
type authzPhase struct {
	kind   string // none, short, notenough, allow, otherhost, alternative, deny, super
	tag    string // unique per phase: names the principal and what the phase creates
	denied bool
	code   int16
	super  bool
	host   string
	grant  []aclSpec

	// Scratch for build and check.
	saved   int64
	p       producer
	m       groupMember
	cleanup func(t *testing.T)
}

// allows reports whether the phase was granted an ALLOW of op.
func (ph *authzPhase) allows(op kmsg.ACLOperation) bool {
	for _, a := range ph.grant {
		if !a.deny && a.op == op {
			return true
		}
	}
	return false
}

func (ph *authzPhase) principal() string {
	if ph.super {
		return authzSuper
	}
	return "User:" + ph.tag
}

// otherHost is an address no host-restricted ACL names.
const otherHost = "10.20.30.40"

func (c authzCase) code(i int) int16 {
	if len(c.codes) == 1 {
		return c.codes[0]
	}
	return c.codes[i]
}

// phases lists the attempts of row idx in the order they run.
func (c authzCase) phases(idx int) []*authzPhase {
	tag := func(kind string) string { return fmt.Sprintf("r%02d-%s", idx, kind) }
	var out []*authzPhase
	add := func(ph *authzPhase, grant []aclSpec) {
		if ph.host == "" {
			ph.host = authzHost
		}
		ph.grant = grant
		out = append(out, ph)
	}
	if c.acls == nil {
		everything := []aclSpec{
			clusterACL(kmsg.ACLOperationAll).denial(), topicACL(kmsg.ACLOperationAll, "*").denial(),
			groupACL(kmsg.ACLOperationAll, "*").denial(), txnACL(kmsg.ACLOperationAll, "*").denial(),
		}
		add(&authzPhase{kind: "none", tag: tag("none")}, nil)
		add(&authzPhase{kind: "deny", tag: tag("deny")}, everything)
		add(&authzPhase{kind: "super", tag: tag("super"), super: true}, nil)
		return out
	}
	add(&authzPhase{kind: "none", tag: tag("none"), denied: true, code: c.code(0)}, nil)
	if len(c.acls) > 1 {
		for i := range c.acls {
			if c.code(i) == notRequired {
				continue
			}
			short := slices.Delete(slices.Clone(c.acls), i, i+1)
			add(&authzPhase{kind: "short", tag: tag(fmt.Sprintf("short%d", i)), denied: true, code: c.code(i)}, short)
		}
	}
	for i, n := range c.notEnough {
		add(&authzPhase{kind: "notenough", tag: tag(fmt.Sprintf("ne%d", i)), denied: true, code: n.code}, n.acls)
	}
	add(&authzPhase{kind: "allow", tag: tag("allow")}, c.acls)
	for i, a := range c.acls {
		if a.host != "" {
			// The allow phase's principal, connecting from elsewhere.
			add(&authzPhase{kind: "otherhost", tag: tag("otherhost"), denied: true, code: c.code(i), host: otherHost}, c.acls)
			break
		}
	}
	for i, alt := range c.alternatives {
		add(&authzPhase{kind: "alternative", tag: tag(fmt.Sprintf("alt%d", i))}, alt)
	}
	deny, code := c.deny, c.code(0)
	if deny == nil {
		deny = []aclSpec{c.acls[0].denial()}
	}
	if c.denyCode != nil {
		code = *c.denyCode
	}
	add(&authzPhase{kind: "deny", tag: tag("deny"), denied: true, code: code}, append(slices.Clone(c.acls), deny...))
	add(&authzPhase{kind: "super", tag: tag("super"), super: true}, nil)
	return out
}

func TestAuthorizationMatrix(t *testing.T) {
	e := startAuthzBroker(t)
	f := setupAuthzFixture(t, e)
	cases := authzCases(f)

	covered := map[int16]bool{}
	for _, c := range cases {
		covered[c.key] = true
		min, max, ok := e.b.Versions(c.key)
		if !ok || c.version < min || c.version > max {
			t.Errorf("%s: %s v%d is not served", c.name, kmsg.NameForKey(c.key), c.version)
		}
	}
	for _, k := range supportedAPIs() {
		if !covered[k.ApiKey] {
			t.Errorf("%s (key %d) is served but has no row in the authorization matrix", kmsg.NameForKey(k.ApiKey), k.ApiKey)
		}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ph := range c.phases(i) {
				if !ph.super {
					e.grant(t, ph.principal(), ph.grant...)
				}
				req := c.build(t, e, ph)
				req.SetVersion(c.version)
				resp := e.send(t, ph.principal(), ph.host, req)
				ok := t.Run(ph.tag, func(t *testing.T) {
					if ph.denied {
						t.Logf("granted %v; Kafka answers %s", ph.grant, errName(ph.code))
					} else {
						t.Logf("granted %v; Kafka allows it", ph.grant)
					}
					c.check(t, e, ph, resp)
				})
				if ph.cleanup != nil {
					ph.cleanup(t)
				}
				if !ok {
					return
				}
			}
		})
	}
}

// authzFixture is what every row finds in the broker: data a denied
// principal must not see.
type authzFixture struct {
	e *authzEnv
	// orders is the topic most rows ask about: records of an idempotent
	// producer, offsets of group "readers", an open transaction.
	ordersID [16]byte
	// live is a Stable group of one static member whose assignment is
	// liveAssignment.
	live groupMember
	// ongoing is a transaction with orders-0 in it.
	ongoing producer
}

const liveAssignment = "secret-assignment"

func setupAuthzFixture(t *testing.T, e *authzEnv) *authzFixture {
	t.Helper()
	// Super users pass even an explicit DENY of everything.
	e.grant(t, authzSuper,
		clusterACL(kmsg.ACLOperationAll).denial(), topicACL(kmsg.ACLOperationAll, "*").denial(),
		groupACL(kmsg.ACLOperationAll, "*").denial(), txnACL(kmsg.ACLOperationAll, "*").denial())
	e.awaitCoordinators(t)
	for _, name := range []string{"orders", "secret", "trim", "markers", "cfg", "stop-victim"} {
		e.createTopic(t, name, 1)
	}
	f := &authzFixture{e: e, ordersID: e.b.topic("orders").ID}

	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(4)
	ip := e.admin(t, req).(*kmsg.InitProducerIDResponse)
	if ip.ErrorCode != 0 {
		t.Fatalf("idempotent InitProducerId: %s", errName(ip.ErrorCode))
	}
	e.produce(t, "orders", logstoreOpts(ip.ProducerID, ip.ProducerEpoch, 0, false), 3, nil)
	e.produce(t, "secret", plainOpts(), 2, nil)
	e.produce(t, "trim", plainOpts(), 2, nil)

	e.commitOffset(t, "readers", "orders", 2)
	e.commitOffset(t, "readers", "secret", 5)
	e.commitOffset(t, "hidden", "secret", 1)
	f.live = e.joinGroup(t, "live", "live-1", []byte(liveAssignment))
	f.ongoing = e.initProducer(t, "ongoing")
	e.beginTxn(t, f.ongoing, "orders")
	return f
}

// opsBits is an authorized-operations bitfield (Kafka's
// Utils.to32BitField of the operations' codes).
func opsBits(ops ...kmsg.ACLOperation) int32 {
	var bits int32
	for _, op := range ops {
		bits |= 1 << uint(op)
	}
	return bits
}

func wantCode(t *testing.T, what string, got, want int16) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %s, want %s", what, errName(got), errName(want))
	}
}

func wantTopics[T any](t *testing.T, what string, items []T, name func(T) string, want ...string) {
	t.Helper()
	var got []string
	for _, it := range items {
		got = append(got, name(it))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

func has[T any](items []T, name func(T) string, want string) bool {
	for _, it := range items {
		if name(it) == want {
			return true
		}
	}
	return false
}

func logstoreOpts(id int64, epoch int16, seq int32, transactional bool) logstore.BatchOptions {
	return logstore.BatchOptions{ProducerID: id, ProducerEpoch: epoch, BaseSequence: seq, Transactional: transactional}
}

// Error codes the rows name.
var (
	topicDenied   = kerr.TopicAuthorizationFailed.Code
	groupDenied   = kerr.GroupAuthorizationFailed.Code
	clusterDenied = kerr.ClusterAuthorizationFailed.Code
	txnDenied     = kerr.TransactionalIDAuthorizationFailed.Code
)

const (
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

func authzCases(f *authzFixture) []authzCase {
	var cases []authzCase
	cases = append(cases, dataPathCases(f)...)
	cases = append(cases, metadataCases(f)...)
	cases = append(cases, brokerCases(f)...)
	cases = append(cases, groupCases(f)...)
	cases = append(cases, txnCases(f)...)
	cases = append(cases, adminCases(f)...)
	cases = append(cases, securityCases(f)...)
	cases = append(cases, quotaCases(f)...)
	return cases
}
