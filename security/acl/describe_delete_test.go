package acl

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AuthorizerTest.testAclsFilter: describe with several filters, then a
// delete in which each binding goes to the first filter that matches it.
func TestBindingsAndMatchingACLsFilter(t *testing.T) {
	a := newTestAuthorizer()
	resource1, resource2 := lit(topic, "foo-1"), lit(topic, "bar-2")
	prefixedRes := pre(topic, "bar-")
	acl1 := Binding{resource1, ent(alice, WildcardHost, opRead, allow)}
	acl2 := Binding{resource1, ent(alice, "192.168.0.1", opWrite, allow)}
	acl3 := Binding{resource2, ent(alice, WildcardHost, opDescribe, allow)}
	acl4 := Binding{prefixedRes, ent(WildcardPrincipal, WildcardHost, opRead, allow)}
	for _, b := range []Binding{acl1, acl2, acl3, acl4} {
		addACLs(a, b.Pattern, b.Entry)
	}
	matching := BindingFilter{PatternFilter{Type: kmsg.ACLResourceTypeAny, Name: strp(resource2.Name), PatternType: kmsg.ACLResourcePatternTypeMatch}, AnyFilter.Entry}

	describe := []struct {
		name string
		f    BindingFilter
		want []Binding
	}{
		// Sorted as AclAuthorizer's cache: type, pattern type, name descending.
		{"any", AnyFilter, []Binding{acl1, acl2, acl3, acl4}},
		{"resource1", BindingFilter{resource1.Filter(), AnyFilter.Entry}, []Binding{acl1, acl2}},
		{"prefixed", BindingFilter{prefixedRes.Filter(), AnyFilter.Entry}, []Binding{acl4}},
		{"match", matching, []Binding{acl3, acl4}},
	}
	for _, c := range describe {
		if got := a.Bindings(c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Bindings(%s) = %v, want %v", c.name, got, c.want)
		}
	}

	filters := []BindingFilter{
		matching,
		acl1.Filter(),
		{resource2.Filter(), AnyFilter.Entry},
		{PatternFilter{Type: topic, Name: strp("baz"), PatternType: kmsg.ACLResourcePatternTypeAny}, AnyFilter.Entry},
	}
	got := a.Matching(filters)
	wantDeleted := [][]Binding{{acl3, acl4}, {acl1}, nil, nil}
	if !reflect.DeepEqual(got.Deleted, wantDeleted) {
		t.Errorf("Deleted = %v, want %v", got.Deleted, wantDeleted)
	}
	wantUpdates := []ResourceUpdate{
		{resource1, []Entry{acl2.Entry}},
		{resource2, nil},
		{prefixedRes, nil},
	}
	if !reflect.DeepEqual(got.Updates, wantUpdates) {
		t.Errorf("Updates = %v, want %v", got.Updates, wantUpdates)
	}
	// Definite filters name patterns the cache lacks: baz as LITERAL and
	// PREFIXED (pattern type ANY), and acl1's / resource2's own patterns
	// are cached already.
	wantUncached := []ResourcePattern{lit(topic, "baz"), pre(topic, "baz")}
	if !reflect.DeepEqual(got.Uncached, wantUncached) {
		t.Errorf("Uncached = %v, want %v", got.Uncached, wantUncached)
	}
	// Matching does not change the cache.
	if n := len(a.Bindings(AnyFilter)); n != 4 {
		t.Fatalf("cache changed: %d bindings", n)
	}
}

// AuthorizerTest's delete cases on wildcard and prefixed resources, and
// DescribeAcls by principal (testGetAclsPrincipal).
func TestMatchingDeletes(t *testing.T) {
	wild, prefixedRes := lit(topic, WildcardResource), pre(topic, "foo")
	byEntry := func(p ResourcePattern, e Entry) BindingFilter { return BindingFilter{p.Filter(), e.Filter()} }
	allOf := func(p ResourcePattern) BindingFilter { return BindingFilter{p.Filter(), AnyFilter.Entry} }
	cases := []struct {
		name    string
		setup   adds
		filters []BindingFilter
		want    []ResourceUpdate
	}{
		{"one ACL on wildcard", adds{wild: {allowReadAll, allowWriteAll}}, []BindingFilter{byEntry(wild, allowReadAll)},
			[]ResourceUpdate{{wild, []Entry{allowWriteAll}}}},
		{"all ACLs on wildcard", adds{wild: {allowReadAll}}, []BindingFilter{allOf(wild)},
			[]ResourceUpdate{{wild, nil}}},
		{"one ACL on prefixed", adds{prefixedRes: {allowReadAll, allowWriteAll}}, []BindingFilter{byEntry(prefixedRes, allowReadAll)},
			[]ResourceUpdate{{prefixedRes, []Entry{allowWriteAll}}}},
		{"all ACLs on prefixed", adds{prefixedRes: {allowReadAll, allowWriteAll}}, []BindingFilter{allOf(prefixedRes)},
			[]ResourceUpdate{{prefixedRes, nil}}},
		{"literal filter does not touch wildcard", adds{wild: {allowReadAll}}, []BindingFilter{allOf(lit(topic, "x"))}, nil},
		{"no filters", adds{wild: {allowReadAll}}, nil, nil},
	}
	for _, c := range cases {
		a := newTestAuthorizer()
		for p, es := range c.setup {
			a.SetResourceACLs(p, es)
		}
		if got := a.Matching(c.filters).Updates; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Updates = %v, want %v", c.name, got, c.want)
		}
	}

	a := newTestAuthorizer()
	r := lit(topic, "t")
	a.SetResourceACLs(r, []Entry{ent(alice, WildcardHost, opWrite, allow)})
	byPrincipal := func(p string) BindingFilter {
		return BindingFilter{AnyFilter.Pattern, EntryFilter{Principal: strp(p), Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}}
	}
	if n := len(a.Bindings(byPrincipal(WildcardPrincipal))); n != 0 {
		t.Errorf("specific ACL returned for wildcard principal filter: %d", n)
	}
	if n := len(a.Bindings(byPrincipal(alice))); n != 1 {
		t.Errorf("specific ACL not returned for its principal: %d", n)
	}
	a.SetResourceACLs(r, []Entry{ent(WildcardPrincipal, WildcardHost, opWrite, allow)})
	if n := len(a.Bindings(byPrincipal(WildcardPrincipal))); n != 1 {
		t.Errorf("wildcard ACL not returned for wildcard filter: %d", n)
	}
	if n := len(a.Bindings(byPrincipal(alice))); n != 0 {
		t.Errorf("wildcard ACL returned for specific filter: %d", n)
	}
}

func TestBindingsOrder(t *testing.T) {
	a := New(Config{})
	e := allowReadAll
	for _, p := range []ResourcePattern{pre(group, "g"), lit(topic, "a"), lit(topic, "b"), pre(topic, "a"), lit(cluster, ClusterName)} {
		a.SetResourceACLs(p, []Entry{e, ent("User:a", "h", opWrite, deny)})
	}
	var got []ResourcePattern
	for _, b := range a.Bindings(AnyFilter) {
		if len(got) == 0 || got[len(got)-1] != b.Pattern {
			got = append(got, b.Pattern)
		}
	}
	want := []ResourcePattern{lit(topic, "b"), lit(topic, "a"), pre(topic, "a"), pre(group, "g"), lit(cluster, ClusterName)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestDeleteFromEntries(t *testing.T) {
	p := lit(topic, "t")
	e1, e2 := ent(alice, WildcardHost, opRead, allow), ent("User:bob", WildcardHost, opRead, allow)
	readFilter := BindingFilter{AnyFilter.Pattern, EntryFilter{Operation: opRead, Permission: kmsg.ACLPermissionTypeAny}}
	remaining, perFilter := DeleteFromEntries(p, []Entry{e2, e1, e1}, []BindingFilter{{p.Filter(), e2.Filter()}, readFilter})
	if remaining != nil {
		t.Errorf("remaining = %v", remaining)
	}
	want := [][]Binding{{{p, e2}}, {{p, e1}}}
	if !reflect.DeepEqual(perFilter, want) {
		t.Errorf("perFilter = %v, want %v", perFilter, want)
	}
	remaining, perFilter = DeleteFromEntries(p, []Entry{e1}, []BindingFilter{{lit(topic, "other").Filter(), AnyFilter.Entry}})
	if perFilter != nil || !reflect.DeepEqual(remaining, []Entry{e1}) {
		t.Errorf("non-matching pattern: %v %v", remaining, perFilter)
	}
}

func TestMergeEntries(t *testing.T) {
	// AuthorizerTest.testAddAclsOn*Resource: adding is a set union.
	got := MergeEntries([]Entry{allowReadAll, allowWriteAll}, []Entry{allowWriteAll, denyReadAll})
	want := normalizeEntries([]Entry{allowReadAll, allowWriteAll, denyReadAll})
	if !reflect.DeepEqual(got, want) || len(got) != 3 {
		t.Errorf("MergeEntries = %v", got)
	}
}
