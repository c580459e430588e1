package acl

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's ResourcePatternFilterTest, case for case.
func TestPatternFilterMatches(t *testing.T) {
	anyPT, match := kmsg.ACLResourcePatternTypeAny, kmsg.ACLResourcePatternTypeMatch
	f := func(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType) PatternFilter {
		return PatternFilter{Type: rt, Name: name, PatternType: pt}
	}
	cases := []struct {
		name   string
		filter PatternFilter
		p      ResourcePattern
		want   bool
	}{
		{"different resource type", f(topic, strp("Name"), literal), lit(group, "Name"), false},
		{"different name", f(topic, strp("Different"), prefixed), pre(topic, "Name"), false},
		{"different name case", f(topic, strp("NAME"), literal), lit(topic, "Name"), false},
		{"different pattern type", f(topic, strp("Name"), literal), pre(topic, "Name"), false},
		{"resource type any", f(kmsg.ACLResourceTypeAny, strp("Name"), prefixed), pre(topic, "Name"), true},
		{"resource name any", f(topic, nil, prefixed), pre(topic, "Name"), true},
		{"pattern type any", f(topic, nil, anyPT), pre(topic, "Name"), true},
		{"pattern type match", f(topic, nil, match), pre(topic, "Name"), true},
		{"literal exact", f(topic, strp("Name"), literal), lit(topic, "Name"), true},
		{"literal, filter any", f(topic, strp("Name"), anyPT), lit(topic, "Name"), true},
		{"literal, filter match", f(topic, strp("Name"), match), lit(topic, "Name"), true},
		{"literal not matched by longer name", f(topic, strp("Name-something"), match), lit(topic, "Name"), false},
		{"literal wildcard exact", f(topic, strp("*"), literal), lit(topic, "*"), true},
		{"literal wildcard vs other name", f(topic, strp("Name"), literal), lit(topic, "*"), false},
		{"literal wildcard the other way", f(topic, strp("*"), literal), lit(topic, "Name"), false},
		{"literal wildcard, filter any", f(topic, strp("Name"), anyPT), lit(topic, "*"), false},
		{"literal wildcard, filter match", f(topic, strp("Name"), match), lit(topic, "*"), true},
		{"prefixed exact", f(topic, strp("Name"), prefixed), pre(topic, "Name"), true},
		{"both prefixed, filter prefix of pattern", f(topic, strp("Name"), prefixed), pre(topic, "Name-something"), false},
		{"both prefixed, pattern prefix of filter", f(topic, strp("Name-something"), prefixed), pre(topic, "Name"), false},
		{"prefixed, filter any", f(topic, strp("Name-something"), anyPT), pre(topic, "Name"), false},
		{"prefixed, filter match", f(topic, strp("Name-something"), match), pre(topic, "Name"), true},
		// Codes Kafka does not know are UNKNOWN and match nothing.
		{"unknown resource type", f(kmsg.ACLResourceTypeUnknown, nil, anyPT), lit(topic, "x"), false},
		{"out-of-range resource type", f(99, nil, anyPT), lit(topic, "x"), false},
		{"unknown pattern type", f(topic, nil, kmsg.ACLResourcePatternTypeUnknown), lit(topic, "x"), false},
	}
	for _, c := range cases {
		if got := c.filter.Matches(c.p); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// Kafka's AclBindingTest.testMatching and testMatchesAtMostOne.
func TestBindingFilterMatches(t *testing.T) {
	acl1 := Binding{lit(topic, "mytopic"), ent("User:ANONYMOUS", "", opAll, allow)}
	acl2 := Binding{lit(topic, "mytopic"), ent("User:*", "", opRead, allow)}
	acl3 := Binding{lit(topic, "mytopic2"), ent("User:ANONYMOUS", "127.0.0.1", opRead, deny)}
	unknownACL := Binding{lit(topic, "mytopic2"), ent("User:ANONYMOUS", "127.0.0.1", kmsg.ACLOperationUnknown, deny)}
	anyAnonymous := BindingFilter{AnyFilter.Pattern, EntryFilter{Principal: strp("User:ANONYMOUS"), Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}}
	anyDeny := BindingFilter{AnyFilter.Pattern, EntryFilter{Operation: kmsg.ACLOperationAny, Permission: deny}}
	anyMyTopic := BindingFilter{lit(topic, "mytopic").Filter(), AnyFilter.Entry}
	cases := []struct {
		name string
		f    BindingFilter
		b    Binding
		want bool
	}{
		{"any acl1", AnyFilter, acl1, true},
		{"any acl2", AnyFilter, acl2, true},
		{"any acl3", AnyFilter, acl3, true},
		{"anonymous acl1", anyAnonymous, acl1, true},
		{"anonymous acl2", anyAnonymous, acl2, false},
		{"anonymous acl3", anyAnonymous, acl3, true},
		{"deny acl1", anyDeny, acl1, false},
		{"deny acl2", anyDeny, acl2, false},
		{"deny acl3", anyDeny, acl3, true},
		{"mytopic acl1", anyMyTopic, acl1, true},
		{"mytopic acl2", anyMyTopic, acl2, true},
		{"mytopic acl3", anyMyTopic, acl3, false},
		{"anonymous unknown", anyAnonymous, unknownACL, true},
		{"deny unknown", anyDeny, unknownACL, true},
		{"mytopic unknown", anyMyTopic, unknownACL, false},
		{"own filter", acl3.Filter(), acl3, true},
		{"own filter, other entry", acl3.Filter(), acl1, false},
		{"host filter", BindingFilter{AnyFilter.Pattern, EntryFilter{Host: strp("127.0.0.1"), Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}}, acl3, true},
		{"host filter, empty host", BindingFilter{AnyFilter.Pattern, EntryFilter{Host: strp("127.0.0.1"), Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}}, acl1, false},
		// A wildcard principal filter is a string: it does not select every principal.
		{"wildcard principal filter", BindingFilter{AnyFilter.Pattern, EntryFilter{Principal: strp("User:*"), Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}}, acl1, false},
		{"operation filter", BindingFilter{AnyFilter.Pattern, EntryFilter{Operation: opRead, Permission: kmsg.ACLPermissionTypeAny}}, acl1, false},
	}
	for _, c := range cases {
		if got := c.f.Matches(c.b); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	if !unknownACL.isUnknown() || acl1.isUnknown() {
		t.Error("isUnknown")
	}
	for _, b := range []Binding{acl1, acl2, acl3} {
		if s := b.Filter().IndefiniteField(); s != "" {
			t.Errorf("%v.Filter() is indefinite: %s", b, s)
		}
	}
	for _, f := range []BindingFilter{anyAnonymous, anyDeny, anyMyTopic} {
		if f.MatchesAtMostOne() {
			t.Errorf("%v matches at most one", f)
		}
	}
}

func TestIndefiniteField(t *testing.T) {
	definite := Binding{lit(topic, "t"), ent(alice, "*", opRead, allow)}.Filter()
	cases := []struct {
		name   string
		mutate func(*BindingFilter)
		want   string
	}{
		{"definite", func(*BindingFilter) {}, ""},
		{"pattern type any is still definite", func(f *BindingFilter) { f.Pattern.PatternType = kmsg.ACLResourcePatternTypeAny }, ""},
		{"type any", func(f *BindingFilter) { f.Pattern.Type = kmsg.ACLResourceTypeAny }, "Resource type is ANY."},
		{"type unknown", func(f *BindingFilter) { f.Pattern.Type = 77 }, "Resource type is UNKNOWN."},
		{"name null", func(f *BindingFilter) { f.Pattern.Name = nil }, "Resource name is NULL."},
		{"match", func(f *BindingFilter) { f.Pattern.PatternType = kmsg.ACLResourcePatternTypeMatch }, "Resource pattern type is MATCH."},
		{"pattern unknown", func(f *BindingFilter) { f.Pattern.PatternType = 0 }, "Resource pattern type is UNKNOWN."},
		{"principal null", func(f *BindingFilter) { f.Entry.Principal = nil }, "Principal is NULL"},
		{"host null", func(f *BindingFilter) { f.Entry.Host = nil }, "Host is NULL"},
		{"op any", func(f *BindingFilter) { f.Entry.Operation = kmsg.ACLOperationAny }, "Operation is ANY"},
		{"op unknown", func(f *BindingFilter) { f.Entry.Operation = 0 }, "Operation is UNKNOWN"},
		{"perm any", func(f *BindingFilter) { f.Entry.Permission = kmsg.ACLPermissionTypeAny }, "Permission type is ANY"},
		{"perm unknown", func(f *BindingFilter) { f.Entry.Permission = 9 }, "Permission type is UNKNOWN"},
	}
	for _, c := range cases {
		f := definite
		c.mutate(&f)
		if got := f.IndefiniteField(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if f.MatchesAtMostOne() != (c.want == "") {
			t.Errorf("%s: MatchesAtMostOne disagrees", c.name)
		}
	}
}
