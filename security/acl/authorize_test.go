package acl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type check struct {
	name      string
	principal string
	host      string
	op        kmsg.ACLOperation
	r         Resource
	want      bool
}

func runChecks(t *testing.T, a *Authorizer, checks []check) {
	t.Helper()
	for _, c := range checks {
		if got := a.Authorize(c.principal, c.host, c.op, c.r); got != c.want {
			t.Errorf("%s: Authorize(%s, %s, %v, %v) = %v, want %v", c.name, c.principal, c.host, c.op, c.r, got, c.want)
		}
	}
}

// AuthorizerTest.testTopicAcl: per-host allows and denies, implied DESCRIBE.
func TestAuthorizeTopicACL(t *testing.T) {
	a := newTestAuthorizer()
	user1, user2, user3 := "User:alice", "User:rob", "User:batman"
	host1, host2 := "192.168.1.1", "192.168.1.2"
	r := lit(topic, "foo-1")
	addACLs(a, r,
		ent(user1, host1, opRead, allow),
		ent(user1, host2, opRead, allow),
		ent(user1, host1, opRead, deny),
		ent(user1, host1, opWrite, allow),
		ent(user1, WildcardHost, opDescribe, allow),
		ent(user2, WildcardHost, opRead, allow),
		ent(user3, WildcardHost, opWrite, allow),
	)
	rr := res(topic, "foo-1")
	runChecks(t, a, []check{
		{"read host2", user1, host2, opRead, rr, true},
		{"read host1 denied", user1, host1, opRead, rr, false},
		{"write host1", user1, host1, opWrite, rr, true},
		{"write host2 no allow", user1, host2, opWrite, rr, false},
		{"describe host1", user1, host1, opDescribe, rr, true},
		{"describe host2", user1, host2, opDescribe, rr, true},
		{"alter host1", user1, host1, opAlter, rr, false},
		{"alter host2", user1, host2, opAlter, rr, false},
		{"user2 describe via read", user2, host1, opDescribe, rr, true},
		{"user3 describe via write", user3, host1, opDescribe, rr, true},
		{"user2 read", user2, host1, opRead, rr, true},
		{"user3 write", user3, host1, opWrite, rr, true},
		{"other topic has no ACLs", user1, host2, opRead, res(topic, "foo-2"), false},
	})
}

func TestAuthorizeDecisions(t *testing.T) {
	user, host := "User:alice", "192.168.2.1"
	r := lit(topic, "foo")
	rr := res(topic, "foo")
	cases := []struct {
		name   string
		cfg    Config
		setup  map[ResourcePattern][]Entry
		checks []check
	}{
		{
			// testDenyTakesPrecedence
			name: "deny takes precedence",
			setup: map[ResourcePattern][]Entry{r: {
				ent(WildcardPrincipal, WildcardHost, opAll, allow),
				ent(user, host, opAll, deny),
			}},
			checks: []check{{"read", user, host, opRead, rr, false}, {"other host", user, "10.0.0.1", opRead, rr, true}},
		},
		{
			// testAllowAllAccess
			name:   "allow all",
			setup:  map[ResourcePattern][]Entry{r: {ent(WildcardPrincipal, WildcardHost, opAll, allow)}},
			checks: []check{{"random user", "User:random", "192.0.4.4", opRead, rr, true}},
		},
		{
			// testSuperUserHasAccess, with super.users as Kafka's test writes it.
			name:  "super users",
			cfg:   Config{SuperUsers: superUsersConf},
			setup: map[ResourcePattern][]Entry{r: {ent(WildcardPrincipal, WildcardHost, opAll, deny)}},
			checks: []check{
				{"superuser1", "User:superuser1", "192.0.4.4", opRead, rr, true},
				{"superuser2 (trimmed)", "User:superuser2", "192.0.4.4", opRead, rr, true},
				{"no ACL resource", "User:superuser1", "192.0.4.4", opAlter, res(group, "g"), true},
				{"not super", "User:superuser3", "192.0.4.4", opRead, rr, false},
			},
		},
		{
			// testNoAclFound / testWildCardAcls first assertion
			name:   "no ACL denies",
			checks: []check{{"read", user, host, opRead, rr, false}},
		},
		{
			// testNoAclFoundOverride
			name: "allow everyone if no ACL found",
			cfg:  Config{AllowEveryoneIfNoACLFound: true},
			setup: map[ResourcePattern][]Entry{
				lit(topic, "other"): {ent("User:bob", WildcardHost, opRead, allow)},
				pre(topic, "fo"):    {ent("User:bob", WildcardHost, opRead, allow)},
			},
			checks: []check{
				{"no ACL applies", user, host, opRead, res(topic, "bar"), true},
				// A prefixed ACL applies to "foo", so allow-everyone does not.
				{"prefixed ACL applies", user, host, opRead, rr, false},
				{"literal ACL applies", user, host, opRead, res(topic, "other"), false},
			},
		},
		{
			// testAccessAllowedIfAllowAclExistsOnWildcardResource
			name:   "wildcard resource allow",
			setup:  map[ResourcePattern][]Entry{lit(topic, WildcardResource): {allowReadAll}},
			checks: []check{{"read", alice, aliceHost, opRead, rr, true}, {"write", alice, aliceHost, opWrite, rr, false}},
		},
		{
			// testAccessAllowedIfAllowAclExistsOnPrefixedResource
			name:  "prefixed resource allow",
			setup: map[ResourcePattern][]Entry{pre(topic, "foo"): {allowReadAll}},
			checks: []check{
				{"prefix of name", alice, aliceHost, opRead, res(topic, "foo-123"), true},
				{"equal to name", alice, aliceHost, opRead, rr, true},
				{"not a prefix", alice, aliceHost, opRead, res(topic, "fo"), false},
				{"other type", alice, aliceHost, opRead, res(group, "foo"), false},
			},
		},
		{
			// testAuthorizeWithEmptyResourceName
			name:  "empty resource name",
			setup: map[ResourcePattern][]Entry{lit(group, WildcardResource): {allowReadAll}},
			checks: []check{
				{"wildcard applies to empty name", alice, aliceHost, opRead, res(group, ""), true},
				{"no ACL for topic", alice, aliceHost, opRead, res(topic, ""), false},
			},
		},
		{
			// testSingleCharacterResourceAcls
			name: "single character resources",
			setup: map[ResourcePattern][]Entry{
				lit(topic, "f"): {allowReadAll},
				pre(topic, "_"): {allowReadAll},
			},
			checks: []check{
				{"f", alice, aliceHost, opRead, res(topic, "f"), true},
				{"foo", alice, aliceHost, opRead, res(topic, "foo"), false},
				{"_foo", alice, aliceHost, opRead, res(topic, "_foo"), true},
				{"_", alice, aliceHost, opRead, res(topic, "_"), true},
				{"foo_", alice, aliceHost, opRead, res(topic, "foo_"), false},
			},
		},
		{
			// testAllowAccessWithCustomPrincipal: principals compare by
			// type and name, here as the string.
			name: "principal and host must both match",
			setup: map[ResourcePattern][]Entry{r: {
				ent(user, "192.168.1.1", opRead, deny),
				ent(user, "192.168.1.2", opRead, allow),
			}},
			checks: []check{
				{"host2", user, "192.168.1.2", opRead, rr, true},
				{"host1 denied", user, "192.168.1.1", opRead, rr, false},
				{"other principal type", "Group:alice", "192.168.1.2", opRead, rr, false},
			},
		},
		{
			name: "wildcard principal",
			setup: map[ResourcePattern][]Entry{r: {
				ent(WildcardPrincipal, "10.0.0.1", opWrite, allow),
				ent(WildcardPrincipal, "10.0.0.2", opWrite, deny),
			}},
			checks: []check{
				{"any user host1", "User:x", "10.0.0.1", opWrite, rr, true},
				{"any user host2 denied", "User:x", "10.0.0.2", opWrite, rr, false},
				// Kafka tests the entry's principal against "User:*" only, so
				// the wildcard covers principals of every type.
				{"other principal type", "Group:x", "10.0.0.1", opWrite, rr, true},
			},
		},
		{
			// A deny on a prefix or on "*" beats a literal allow.
			name: "deny through prefix and wildcard",
			setup: map[ResourcePattern][]Entry{
				lit(topic, "foo-1"):          {allowReadAll, allowWriteAll},
				pre(topic, "foo-"):           {denyReadAll},
				lit(topic, WildcardResource): {ent(WildcardPrincipal, WildcardHost, opWrite, deny)},
			},
			checks: []check{
				{"read denied by prefix", alice, aliceHost, opRead, res(topic, "foo-1"), false},
				{"write denied by wildcard", alice, aliceHost, opWrite, res(topic, "foo-1"), false},
				{"describe still implied", alice, aliceHost, opDescribe, res(topic, "foo-1"), true},
			},
		},
		{
			// Entries with UNKNOWN parts never grant, but still make ACLs
			// "exist", so allow-everyone does not apply.
			name: "unknown entries count as existing",
			cfg:  Config{AllowEveryoneIfNoACLFound: true},
			setup: map[ResourcePattern][]Entry{r: {
				ent(alice, WildcardHost, kmsg.ACLOperationUnknown, allow),
				ent(alice, WildcardHost, opRead, kmsg.ACLPermissionTypeUnknown),
			}},
			checks: []check{{"read", alice, aliceHost, opRead, rr, false}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := New(c.cfg)
			for p, es := range c.setup {
				a.SetResourceACLs(p, es)
			}
			runChecks(t, a, c.checks)
		})
	}
}

// AuthorizerTest.testWildCardAcls: allows on "*" and the literal combine,
// a deny on "*" overrides the literal allow.
func TestAuthorizeWildcardACLs(t *testing.T) {
	a := newTestAuthorizer()
	user1, host1 := "User:alice", "192.168.3.1"
	wild := lit(topic, WildcardResource)
	r := lit(topic, "foo")
	addACLs(a, wild, ent(user1, host1, opRead, allow))
	if !a.Authorize(user1, host1, opRead, res(topic, "foo")) {
		t.Fatal("READ through the wildcard resource should be allowed")
	}
	addACLs(a, r, ent(user1, host1, opWrite, allow))
	if !a.Authorize(user1, host1, opWrite, res(topic, "foo")) {
		t.Fatal("WRITE through the literal should be allowed")
	}
	addACLs(a, wild, ent(user1, host1, opWrite, deny))
	if a.Authorize(user1, host1, opWrite, res(topic, "foo")) {
		t.Fatal("WRITE should be denied by the wildcard deny")
	}
	if !a.Authorize(user1, host1, opRead, res(topic, "foo")) {
		t.Fatal("READ is still allowed")
	}
}

// AuthorizerTest.testAclInheritance: what ALLOW and DENY of one operation
// imply for the others, checked on the cluster resource.
func TestAuthorizeACLInheritance(t *testing.T) {
	user, host := "User:alice", "192.168.3.1"
	clusterRes := lit(cluster, ClusterName)
	cases := []struct {
		perm    kmsg.ACLPermissionType
		parent  kmsg.ACLOperation
		implied []kmsg.ACLOperation
	}{
		{allow, opAll, concreteOps},
		{deny, opAll, concreteOps},
		{allow, opRead, []kmsg.ACLOperation{opDescribe}},
		{allow, opWrite, []kmsg.ACLOperation{opDescribe}},
		{allow, opDelete, []kmsg.ACLOperation{opDescribe}},
		{allow, opAlter, []kmsg.ACLOperation{opDescribe}},
		{deny, opDescribe, nil},
		{allow, opAlterConfigs, []kmsg.ACLOperation{opDescribeConfigs}},
		{deny, opDescribeConfigs, nil},
		{deny, opRead, nil},
		{allow, opDescribe, nil},
	}
	for _, c := range cases {
		a := newTestAuthorizer()
		entries := []Entry{ent(user, WildcardHost, c.parent, c.perm)}
		if c.perm == deny {
			entries = append(entries, ent(user, WildcardHost, opAll, allow))
		}
		a.SetResourceACLs(clusterRes, entries)
		for _, op := range concreteOps {
			hit := op == c.parent
			for _, i := range c.implied {
				hit = hit || op == i
			}
			// An ALLOW grants exactly the implied set; a DENY refuses it and
			// the ALL allow grants the rest.
			want := hit
			if c.perm == deny {
				want = !hit
			}
			if got := a.Authorize(user, host, op, res(cluster, ClusterName)); got != want {
				t.Errorf("%v %v: op %v = %v, want %v", c.perm, c.parent, op, got, want)
			}
		}
	}
}

// AuthorizerTest.testAuthorizeWithPrefixedResource: many unrelated denies
// around the name do not affect the allow on its prefix.
func TestAuthorizeWithPrefixedResource(t *testing.T) {
	a := newTestAuthorizer()
	for _, p := range []ResourcePattern{
		lit(topic, "a_other"), pre(topic, "a_other"),
		pre(topic, "foo-5ad1"), pre(topic, "foo-77c9"), pre(topic, "foo-91ab-zzz"),
		pre(topic, "fooo-1"), pre(topic, "fo-2"), pre(topic, "fop-3"), pre(topic, "fon-4"),
		pre(topic, "fon-"), pre(topic, "z_other"), lit(topic, "z_other"),
	} {
		addACLs(a, p, denyReadAll)
	}
	addACLs(a, pre(topic, "foo"), allowReadAll)
	if !a.Authorize(alice, aliceHost, opRead, res(topic, "foo-0c3e")) {
		t.Fatal("READ on foo-0c3e should be allowed by prefix foo")
	}
	if a.Authorize(alice, aliceHost, opRead, res(topic, "foo-5ad1x")) {
		t.Fatal("READ on foo-5ad1x should be denied by prefix foo-5ad1")
	}
}

func TestAuthorizeCacheUpdates(t *testing.T) {
	a := newTestAuthorizer()
	r := lit(topic, "t")
	a.SetResourceACLs(r, []Entry{allowReadAll, allowReadAll})
	if got := a.ResourceACLs(r); len(got) != 1 {
		t.Fatalf("duplicates must collapse, got %v", got)
	}
	a.SetResourceACLs(r, []Entry{allowWriteAll})
	if a.Authorize(alice, aliceHost, opRead, res(topic, "t")) {
		t.Fatal("the set is replaced, not merged")
	}
	a.SetResourceACLs(r, nil)
	if got := a.Bindings(AnyFilter); len(got) != 0 {
		t.Fatalf("an empty set removes the pattern, got %v", got)
	}
	a.SetResourceACLs(ResourcePattern{Type: kmsg.ACLResourceTypeAny, Name: "x", PatternType: literal}, []Entry{allowReadAll})
	a.SetResourceACLs(ResourcePattern{Type: topic, Name: "x", PatternType: kmsg.ACLResourcePatternTypeMatch}, []Entry{allowReadAll})
	if got := a.Bindings(AnyFilter); len(got) != 0 {
		t.Fatalf("unstorable patterns are ignored, got %v", got)
	}
	a.SetResourceACLs(r, []Entry{ent(alice, WildcardHost, 99, 42)})
	if got := a.ResourceACLs(r); got[0].Operation != kmsg.ACLOperationUnknown || got[0].Permission != kmsg.ACLPermissionTypeUnknown {
		t.Fatalf("out-of-range codes become UNKNOWN, got %v", got)
	}
}

func TestAuthorizedOperations(t *testing.T) {
	a := newTestAuthorizer()
	addACLs(a, lit(topic, "t"), ent(alice, WildcardHost, opRead, allow), ent(alice, WildcardHost, opAlterConfigs, allow))
	addACLs(a, lit(cluster, ClusterName), ent(alice, WildcardHost, opAll, allow), ent(alice, WildcardHost, opAlter, deny))
	bit := func(ops ...kmsg.ACLOperation) int32 {
		var b int32
		for _, o := range ops {
			b |= 1 << o
		}
		return b
	}
	cases := []struct {
		name       string
		principal  string
		r          Resource
		candidates []kmsg.ACLOperation
		want       int32
	}{
		{"topic read+alter_configs", alice, res(topic, "t"), nil, bit(opRead, opDescribe, opDescribeConfigs, opAlterConfigs)},
		{"cluster all but alter", alice, res(cluster, ClusterName), nil,
			bit(opCreate, opDescribe, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite)},
		{"no ACLs", alice, res(group, "g"), nil, 0},
		{"super user gets the supported set", "User:superuser1", res(group, "g"), nil, bit(opRead, opDelete, opDescribe)},
		{"explicit candidates", alice, res(topic, "t"), []kmsg.ACLOperation{opRead, opWrite, 40, -1}, bit(opRead)},
	}
	for _, c := range cases {
		if got := a.AuthorizedOperations(c.principal, aliceHost, c.r, c.candidates); got != c.want {
			t.Errorf("%s: got %b, want %b", c.name, got, c.want)
		}
	}
}

func TestSupportedOperations(t *testing.T) {
	// AclEntry.supportedOperations, as bit fields.
	want := map[kmsg.ACLResourceType]int32{
		topic:                               0b0000_1101_1111_1000, // READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
		group:                               1<<3 | 1<<6 | 1<<8,
		cluster:                             1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12,
		txnID:                               1<<4 | 1<<8,
		kmsg.ACLResourceTypeDelegationToken: 1 << 8,
		kmsg.ACLResourceTypeUser:            1<<13 | 1<<14,
		kmsg.ACLResourceTypeAny:             0,
	}
	for rt, w := range want {
		var got int32
		for _, op := range SupportedOperations(rt) {
			got |= 1 << op
		}
		if got != w {
			t.Errorf("%v: got %b, want %b", rt, got, w)
		}
	}
}
