package acl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type byTypeStep struct {
	add, remove map[ResourcePattern][]Entry
	principal   string
	host        string
	op          kmsg.ACLOperation
	typ         kmsg.ACLResourceType
	want        bool
}

func runByTypeSteps(t *testing.T, a *Authorizer, steps []byTypeStep) {
	t.Helper()
	for i, s := range steps {
		for p, es := range s.add {
			addACLs(a, p, es...)
		}
		for p, es := range s.remove {
			removeACLs(a, p, es...)
		}
		if got := a.AuthorizeByResourceType(s.principal, s.host, s.op, s.typ); got != s.want {
			t.Errorf("step %d: AuthorizeByResourceType(%s, %s, %v, %v) = %v, want %v", i, s.principal, s.host, s.op, s.typ, got, s.want)
		}
	}
}

type adds = map[ResourcePattern][]Entry

// The cases of Kafka's BaseAuthorizerTest, one step per assertion.
func TestAuthorizeByResourceType(t *testing.T) {
	user1, user2 := "User:user1", "User:user2"
	host1, host2 := "192.168.1.1", "192.168.1.2"
	r1, r2 := lit(topic, "sb1-a"), lit(topic, "sb2-b")
	cases := []struct {
		name  string
		cfg   Config
		steps []byTypeStep
	}{
		{
			name: "multiple add and remove",
			steps: []byTypeStep{
				{principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r1: {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: topic, want: true},
				{add: adds{r1: {ent(user1, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{remove: adds{r1: {ent(user1, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: true},
				{remove: adds{r1: {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
			},
		},
		{
			name: "unrelated deny won't dominate allow",
			steps: []byTypeStep{
				{add: adds{
					r1: {ent(user1, host1, opRead, deny), ent(user2, host1, opRead, deny), ent(user1, host2, opWrite, deny),
						ent(user2, host2, opRead, deny), ent(user1, host2, opRead, allow)},
					r2:              {ent(user1, host2, opRead, deny)},
					pre(group, "s"): {ent(user1, host2, opRead, deny)},
				}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{principal: user1, host: host1, op: opRead, typ: group, want: false},
				{principal: user1, host: host1, op: opRead, typ: txnID, want: false},
				{principal: user1, host: host1, op: opRead, typ: cluster, want: false},
				{principal: user1, host: host2, op: opRead, typ: topic, want: true},
			},
		},
		{
			name: "deny takes precedence",
			steps: []byTypeStep{
				{add: adds{r1: {ent(user1, host1, opWrite, allow)}}, principal: user1, host: host1, op: opWrite, typ: topic, want: true},
				{add: adds{r1: {ent(user1, host1, opWrite, deny)}}, principal: user1, host: host1, op: opWrite, typ: topic, want: false},
			},
		},
		{
			name: "prefixed deny dominates",
			steps: []byTypeStep{
				{add: adds{pre(group, "abcde"): {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: group, want: true},
				{add: adds{pre(group, "abcd"): {ent(user1, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: group, want: false},
				{add: adds{pre(group, "abc"): {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: group, want: true},
				{add: adds{pre(group, "a"): {ent(user1, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: group, want: false},
				{add: adds{pre(group, "ab"): {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: group, want: false},
			},
		},
		{
			name: "wildcard deny dominates",
			steps: []byTypeStep{
				{add: adds{pre(group, "hello"): {ent(user1, host1, opWrite, allow)}}, principal: user1, host: host1, op: opWrite, typ: group, want: true},
				{add: adds{lit(group, "*"): {ent(user1, host1, opWrite, deny)}}, principal: user1, host: host1, op: opWrite, typ: group, want: false},
				{add: adds{lit(group, "*"): {ent(user1, host1, opWrite, allow)}}, principal: user1, host: host1, op: opWrite, typ: group, want: false},
				{add: adds{lit(group, "aloha"): {ent(user1, host1, opWrite, allow)}}, principal: user1, host: host1, op: opWrite, typ: group, want: false},
			},
		},
		{
			name: "ALL operation entries",
			steps: []byTypeStep{
				{principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r1: {ent(user1, host1, opWrite, deny), ent(user1, host1, opAll, allow)}}, principal: user1, host: host1, op: opRead, typ: topic, want: true},
				{add: adds{r1: {ent(user1, host1, opAll, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
			},
		},
		{
			name: "all-host entries",
			steps: []byTypeStep{
				{principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r1: {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: topic, want: true},
				{add: adds{r1: {ent(user1, WildcardHost, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r2: {ent(user1, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{principal: user1, host: host2, op: opRead, typ: topic, want: false},
				{add: adds{r2: {ent(user1, WildcardHost, opRead, allow)}}, principal: user1, host: host2, op: opRead, typ: topic, want: true},
				{add: adds{r2: {ent(user1, WildcardHost, opRead, deny)}}, principal: user1, host: host2, op: opRead, typ: topic, want: false},
			},
		},
		{
			name: "all-principal entries",
			steps: []byTypeStep{
				{principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r1: {ent(user1, host1, opRead, allow)}}, principal: user1, host: host1, op: opRead, typ: topic, want: true},
				{add: adds{r1: {ent(WildcardPrincipal, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r2: {ent(user1, host1, opRead, deny)}}, principal: user1, host: host1, op: opRead, typ: topic, want: false},
				{principal: user2, host: host1, op: opRead, typ: topic, want: false},
				{add: adds{r2: {ent(WildcardPrincipal, host1, opRead, allow)}}, principal: user2, host: host1, op: opRead, typ: topic, want: true},
				{add: adds{r2: {ent(WildcardPrincipal, host1, opRead, deny)}}, principal: user2, host: host1, op: opRead, typ: topic, want: false},
			},
		},
		{
			name: "super user has access",
			cfg:  Config{SuperUsers: superUsersConf},
			steps: []byTypeStep{
				{add: adds{
					lit(topic, "*"):   {ent(WildcardPrincipal, WildcardHost, opAll, deny)},
					lit(cluster, "*"): {ent(WildcardPrincipal, WildcardHost, opAll, deny)},
					lit(group, "*"):   {ent(WildcardPrincipal, WildcardHost, opAll, deny)},
					lit(txnID, "*"):   {ent(WildcardPrincipal, WildcardHost, opAll, deny)},
				}, principal: "User:superuser1", host: "192.0.4.4", op: opRead, typ: topic, want: true},
				{principal: "User:superuser1", host: "192.0.4.4", op: opRead, typ: cluster, want: true},
				{principal: "User:superuser1", host: "192.0.4.4", op: opRead, typ: group, want: true},
				{principal: "User:superuser1", host: "192.0.4.4", op: opRead, typ: txnID, want: true},
				{principal: user1, host: "192.0.4.4", op: opRead, typ: txnID, want: false},
			},
		},
		{
			// AuthorizerTest.testAuthorizeByResourceTypeNoAclFoundOverride,
			// plus the one deny that still wins over it.
			name: "allow everyone if no ACL found",
			cfg:  Config{AllowEveryoneIfNoACLFound: true},
			steps: []byTypeStep{
				{principal: alice, host: aliceHost, op: opRead, typ: topic, want: true},
				{principal: alice, host: aliceHost, op: opWrite, typ: topic, want: true},
				{add: adds{r1: {ent(alice, WildcardHost, opRead, deny)}}, principal: alice, host: aliceHost, op: opRead, typ: topic, want: true},
				{add: adds{lit(topic, "*"): {ent(alice, WildcardHost, opRead, deny)}}, principal: alice, host: aliceHost, op: opRead, typ: topic, want: false},
			},
		},
		{
			// AclAuthorizer's override counts exact operations only.
			name: "no implied operations",
			steps: []byTypeStep{
				{add: adds{r1: {ent(alice, WildcardHost, opRead, allow)}}, principal: alice, host: aliceHost, op: opDescribe, typ: topic, want: false},
				{principal: alice, host: aliceHost, op: opRead, typ: topic, want: true},
			},
		},
		{
			name: "literal allow survives unrelated literal deny, not its own",
			steps: []byTypeStep{
				{add: adds{lit(topic, "a"): {ent(alice, WildcardHost, opWrite, allow)}, lit(topic, "b"): {ent(alice, WildcardHost, opWrite, deny)}},
					principal: alice, host: aliceHost, op: opWrite, typ: topic, want: true},
				{add: adds{lit(topic, "a"): {ent(alice, WildcardHost, opWrite, deny)}}, principal: alice, host: aliceHost, op: opWrite, typ: topic, want: false},
				{add: adds{lit(topic, "*"): {ent(alice, WildcardHost, opWrite, allow)}}, principal: alice, host: aliceHost, op: opWrite, typ: topic, want: true},
			},
		},
		{
			name: "non-concrete arguments",
			steps: []byTypeStep{
				{add: adds{r1: {ent(alice, WildcardHost, opAll, allow)}}, principal: alice, host: aliceHost, op: kmsg.ACLOperationAny, typ: topic, want: false},
				{principal: alice, host: aliceHost, op: kmsg.ACLOperationUnknown, typ: topic, want: false},
				{principal: alice, host: aliceHost, op: opRead, typ: kmsg.ACLResourceTypeAny, want: false},
				{principal: alice, host: aliceHost, op: opRead, typ: kmsg.ACLResourceTypeUnknown, want: false},
				{principal: alice, host: aliceHost, op: opRead, typ: topic, want: true},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runByTypeSteps(t, New(c.cfg), c.steps)
		})
	}
}

// The index behind AuthorizeByResourceType must follow replacements and
// removals exactly (AclAuthorizer.updateCache's diff).
func TestAuthorizeByResourceTypeIndex(t *testing.T) {
	a := New(Config{})
	r := lit(topic, "x")
	e1, e2 := ent(alice, WildcardHost, opRead, allow), ent(alice, WildcardHost, opWrite, allow)
	a.SetResourceACLs(r, []Entry{e1, e2})
	a.SetResourceACLs(r, []Entry{e2})
	if a.AuthorizeByResourceType(alice, aliceHost, opRead, topic) {
		t.Fatal("READ entry was replaced away")
	}
	if !a.AuthorizeByResourceType(alice, aliceHost, opWrite, topic) {
		t.Fatal("WRITE entry remains")
	}
	a.RemoveResource(r)
	if a.AuthorizeByResourceType(alice, aliceHost, opWrite, topic) {
		t.Fatal("resource removed")
	}
	if len(a.byType) != 0 {
		t.Fatalf("index not emptied: %v", a.byType)
	}
}
