package acl

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestValidateCreationsPerBinding(t *testing.T) {
	good := Binding{lit(topic, "t"), ent(alice, WildcardHost, opRead, allow)}
	with := func(mutate func(*Binding)) Binding { b := good; mutate(&b); return b }
	invalid := func(msg string) *Rejection {
		return &Rejection{Scope: ScopeBinding, Err: kerr.InvalidRequest, Message: msg}
	}
	cases := []struct {
		name string
		b    Binding
		want *Rejection
	}{
		{"valid literal", good, nil},
		{"valid prefixed", with(func(b *Binding) { b.Pattern = pre(group, "app-") }), nil},
		{"valid wildcard", with(func(b *Binding) { b.Pattern = lit(topic, "*") }), nil},
		// Kafka's ZooKeeper path accepts a PREFIXED "*".
		{"prefixed star", with(func(b *Binding) { b.Pattern = pre(topic, "*") }), nil},
		{"valid cluster", with(func(b *Binding) { b.Pattern = lit(cluster, ClusterName) }), nil},
		{"cluster other name", with(func(b *Binding) { b.Pattern = lit(cluster, "other") }),
			invalid("The only valid name for the CLUSTER resource is kafka-cluster")},
		{"cluster empty name", with(func(b *Binding) { b.Pattern = lit(cluster, "") }),
			invalid("The only valid name for the CLUSTER resource is kafka-cluster")},
		// AuthorizerTest.testEmptyAclThrowsException
		{"empty name", with(func(b *Binding) { b.Pattern = lit(group, "") }), invalid("Invalid empty resource name")},
		// AuthorizerTest.testCreateAclWithInvalidResourceName
		{"slash in name", with(func(b *Binding) { b.Pattern.Name = "test/1" }), invalid("Failed to create ACL")},
		{"out-of-range resource type", with(func(b *Binding) { b.Pattern.Type = 42 }), invalid("Failed to create ACL")},
		{"out-of-range pattern type", with(func(b *Binding) { b.Pattern.PatternType = 9 }), invalid("Failed to create ACL")},
		{"out-of-range operation", with(func(b *Binding) { b.Entry.Operation = 15 }), invalid("Failed to create ACL")},
		{"out-of-range permission", with(func(b *Binding) { b.Entry.Permission = -3 }), invalid("Failed to create ACL")},
		{"bad principal", with(func(b *Binding) { b.Entry.Principal = "alice" }), &Rejection{Scope: ScopeBinding, Err: kerr.UnknownServerError}},
		{"empty principal", with(func(b *Binding) { b.Entry.Principal = "" }), &Rejection{Scope: ScopeBinding, Err: kerr.UnknownServerError}},
		{"principal with empty name is fine", with(func(b *Binding) { b.Entry.Principal = "User:" }), nil},
	}
	for _, c := range cases {
		got := ValidateCreations(1, []Binding{c.b})
		if !reflect.DeepEqual(got[0], c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got[0], c.want)
		}
	}
}

func TestValidateCreationsWholeRequest(t *testing.T) {
	good := Binding{lit(topic, "t"), ent(alice, WildcardHost, opRead, allow)}
	with := func(mutate func(*Binding)) Binding { b := good; mutate(&b); return b }
	cases := []struct {
		name    string
		version int16
		bad     Binding
		want    Rejection
	}{
		{"v0 prefixed", 0, with(func(b *Binding) { b.Pattern.PatternType = prefixed }),
			Rejection{ScopeConnection, kerr.UnsupportedVersion, "Version 0 only supports literal resource pattern types"}},
		{"unknown resource type", 1, with(func(b *Binding) { b.Pattern.Type = 0 }),
			Rejection{ScopeConnection, kerr.InvalidRequest, "CreatableAcls contain unknown elements"}},
		{"unknown pattern type", 1, with(func(b *Binding) { b.Pattern.PatternType = 0 }),
			Rejection{ScopeConnection, kerr.InvalidRequest, "CreatableAcls contain unknown elements"}},
		{"unknown operation", 2, with(func(b *Binding) { b.Entry.Operation = 0 }),
			Rejection{ScopeConnection, kerr.InvalidRequest, "CreatableAcls contain unknown elements"}},
		{"unknown permission", 3, with(func(b *Binding) { b.Entry.Permission = 0 }),
			Rejection{ScopeConnection, kerr.InvalidRequest, "CreatableAcls contain unknown elements"}},
		{"resource type any", 1, with(func(b *Binding) { b.Pattern.Type = kmsg.ACLResourceTypeAny }),
			Rejection{ScopeRequest, kerr.UnknownServerError, ""}},
		{"pattern type any", 1, with(func(b *Binding) { b.Pattern.PatternType = kmsg.ACLResourcePatternTypeAny }),
			Rejection{ScopeRequest, kerr.UnknownServerError, ""}},
		{"pattern type match", 1, with(func(b *Binding) { b.Pattern.PatternType = kmsg.ACLResourcePatternTypeMatch }),
			Rejection{ScopeRequest, kerr.UnknownServerError, ""}},
		{"operation any", 1, with(func(b *Binding) { b.Entry.Operation = kmsg.ACLOperationAny }),
			Rejection{ScopeRequest, kerr.UnknownServerError, ""}},
		{"permission any", 1, with(func(b *Binding) { b.Entry.Permission = kmsg.ACLPermissionTypeAny }),
			Rejection{ScopeRequest, kerr.UnknownServerError, ""}},
	}
	for _, c := range cases {
		got := ValidateCreations(c.version, []Binding{good, c.bad, with(func(b *Binding) { b.Pattern.Name = "" })})
		for i, r := range got {
			if r == nil || *r != c.want {
				t.Errorf("%s: result %d = %+v, want %+v", c.name, i, r, c.want)
			}
		}
	}
	// A connection-level problem outranks a request-level one in any order.
	got := ValidateCreations(1, []Binding{with(func(b *Binding) { b.Entry.Operation = kmsg.ACLOperationAny }), with(func(b *Binding) { b.Entry.Operation = 0 })})
	if got[0].Scope != ScopeConnection || got[1].Scope != ScopeConnection {
		t.Errorf("most severe scope not chosen: %+v %+v", got[0], got[1])
	}
	if len(ValidateCreations(1, nil)) != 0 {
		t.Error("no creations, no results")
	}
}

// A bad principal fails every creation on the same pattern, because
// AclAuthorizer.createAcls parses a resource's new entries together.
func TestValidateCreationsPrincipalGroups(t *testing.T) {
	p1, p2 := lit(topic, "a"), lit(topic, "b")
	bs := []Binding{
		{p1, ent(alice, "*", opRead, allow)},
		{p1, ent("nocolon", "*", opRead, allow)},
		{p2, ent(alice, "*", opRead, allow)},
		{lit(topic, ""), ent(alice, "*", opRead, allow)},
		{p1, ent(alice, "*", opWrite, allow)},
	}
	got := ValidateCreations(1, bs)
	use := &Rejection{Scope: ScopeBinding, Err: kerr.UnknownServerError}
	want := []*Rejection{use, use, nil, {Scope: ScopeBinding, Err: kerr.InvalidRequest, Message: "Invalid empty resource name"}, use}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got[1].Error() == "" {
		t.Error("Rejection.Error is empty")
	}
}

func TestCreationBinding(t *testing.T) {
	c := kmsg.CreateACLsRequestCreation{ResourceType: topic, ResourceName: "t", ResourcePatternType: 0,
		Principal: alice, Host: "*", Operation: opRead, PermissionType: allow}
	if got := CreationBinding(0, c).Pattern.PatternType; got != literal {
		t.Errorf("v0 pattern type = %v, want LITERAL", got)
	}
	c.ResourcePatternType = prefixed
	want := Binding{pre(topic, "t"), ent(alice, "*", opRead, allow)}
	if got := CreationBinding(1, c); got != want {
		t.Errorf("v1 = %+v, want %+v", got, want)
	}
}

func TestDescribeAndDeleteFilters(t *testing.T) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.Version = 1
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch
	req.ResourceName = strp("foo")
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	f, rej := DescribeFilter(req)
	want := BindingFilter{PatternFilter{kmsg.ACLResourceTypeAny, strp("foo"), kmsg.ACLResourcePatternTypeMatch}, EntryFilter{nil, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}}
	if rej != nil || !reflect.DeepEqual(f, want) {
		t.Fatalf("DescribeFilter = %+v, %v", f, rej)
	}
	// v0 is always LITERAL.
	req.Version = 0
	if f, _ := DescribeFilter(req); f.Pattern.PatternType != literal {
		t.Errorf("v0 pattern type = %v", f.Pattern.PatternType)
	}
	// UNKNOWN on the wire makes the request unparsable.
	req.Version = 1
	req.Operation = 0
	if _, rej := DescribeFilter(req); rej == nil || rej.Scope != ScopeConnection || rej.Err != kerr.InvalidRequest {
		t.Errorf("unknown op: %+v", rej)
	}
	// Out-of-range codes become UNKNOWN, matching nothing.
	df := kmsg.DeleteACLsRequestFilter{ResourceType: 50, ResourcePatternType: kmsg.ACLResourcePatternTypeAny,
		Principal: strp(alice), Operation: 66, PermissionType: kmsg.ACLPermissionTypeAny}
	f, rej = DeleteFilter(2, df)
	if rej != nil || f.Pattern.Type != kmsg.ACLResourceTypeUnknown || f.Entry.Operation != kmsg.ACLOperationUnknown || *f.Entry.Principal != alice {
		t.Errorf("DeleteFilter = %+v, %v", f, rej)
	}
	if f.Matches(Binding{lit(topic, "x"), ent(alice, "*", opRead, allow)}) {
		t.Error("an UNKNOWN filter matched")
	}
	df.PermissionType = 0
	if _, rej := DeleteFilter(2, df); rej == nil || rej.Scope != ScopeConnection {
		t.Errorf("unknown permission: %+v", rej)
	}
}

func TestParseSuperUsers(t *testing.T) {
	cases := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"User:superuser1; User:superuser2", []string{"User:superuser1", "User:superuser2"}, false},
		{" User:a ;", []string{"User:a"}, false},
		{";", []string{}, false},
		{"User:a;;User:b", nil, true},
		{"alice", nil, true},
		{" ", nil, true},
	}
	for _, c := range cases {
		got, err := ParseSuperUsers(c.in)
		if (err != nil) != c.wantErr || (!c.wantErr && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("ParseSuperUsers(%q) = %q, %v", c.in, got, err)
		}
	}
}
