package acl

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestZnodePaths(t *testing.T) {
	cases := []struct {
		p    ResourcePattern
		path string
	}{
		// ExtendedAclStoreTest / LiteralAclStoreTest and ZkData's comment.
		{lit(topic, "topic-1"), "/kafka-acl/Topic/topic-1"},
		{lit(cluster, ClusterName), "/kafka-acl/Cluster/kafka-cluster"},
		{pre(topic, "some-topic"), "/kafka-acl-extended/prefixed/Topic/some-topic"},
		{pre(group, "group-1"), "/kafka-acl-extended/prefixed/Group/group-1"},
		{lit(txnID, "tx"), "/kafka-acl/TransactionalId/tx"},
		{lit(kmsg.ACLResourceTypeDelegationToken, "tok"), "/kafka-acl/DelegationToken/tok"},
		{lit(kmsg.ACLResourceTypeUser, "User:bob"), "/kafka-acl/User/User:bob"},
		{lit(topic, "*"), "/kafka-acl/Topic/*"},
	}
	for _, c := range cases {
		got, err := ZnodePath(c.p)
		if err != nil || got != c.path {
			t.Errorf("ZnodePath(%v) = %q, %v; want %q", c.p, got, err, c.path)
		}
		back, err := ParseZnodePath(c.path)
		if err != nil || back != c.p {
			t.Errorf("ParseZnodePath(%q) = %v, %v; want %v", c.path, back, err, c.p)
		}
	}
	for _, p := range []ResourcePattern{
		{Type: kmsg.ACLResourceTypeAny, Name: "x", PatternType: literal},
		{Type: kmsg.ACLResourceTypeUnknown, Name: "x", PatternType: literal},
		{Type: topic, Name: "x", PatternType: kmsg.ACLResourcePatternTypeMatch},
		{Type: topic, Name: "x", PatternType: kmsg.ACLResourcePatternTypeAny},
	} {
		if got, err := ZnodePath(p); err == nil {
			t.Errorf("ZnodePath(%v) = %q, want an error", p, got)
		}
	}
}

func TestParseZnodePath(t *testing.T) {
	cases := []struct {
		path string
		want ResourcePattern
		ok   bool
	}{
		// SecurityUtils.resourceType: Pascal case or any casing of it.
		{"/kafka-acl/TOPIC/a", lit(topic, "a"), true},
		{"/kafka-acl/topic/a", lit(topic, "a"), true},
		{"/kafka-acl/TRANSACTIONALID/a", lit(txnID, "a"), true},
		{"/kafka-acl/TRANSACTIONAL_ID/a", ResourcePattern{}, false},
		{"/kafka-acl/Unknown/a", ResourcePattern{}, false},
		{"/kafka-acl/Any/a", ResourcePattern{}, false},
		{"/kafka-acl/Topic", ResourcePattern{}, false},
		{"/kafka-acl/Topic/", ResourcePattern{}, false},
		{"/kafka-acl/Topic/a/b", ResourcePattern{}, false},
		{"/kafka-acl-extended/literal/Topic/a", ResourcePattern{}, false},
		{"/kafka-acl-changes/acl_changes_0000000001", ResourcePattern{}, false},
		{"/kafka-acl-extended/prefixed/Topic/a:b", pre(topic, "a:b"), true},
		{"kafka-acl/Topic/a", ResourcePattern{}, false},
	}
	for _, c := range cases {
		got, err := ParseZnodePath(c.path)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseZnodePath(%q) = %v, %v", c.path, got, err)
		}
	}
}

func TestInitPaths(t *testing.T) {
	got := InitPaths()
	want := []string{
		"/kafka-acl", "/kafka-acl/Topic", "/kafka-acl/Group", "/kafka-acl/Cluster",
		"/kafka-acl/TransactionalId", "/kafka-acl/DelegationToken", "/kafka-acl/User",
		"/kafka-acl-extended/prefixed", "/kafka-acl-extended/prefixed/Topic", "/kafka-acl-extended/prefixed/Group",
		"/kafka-acl-extended/prefixed/Cluster", "/kafka-acl-extended/prefixed/TransactionalId",
		"/kafka-acl-extended/prefixed/DelegationToken", "/kafka-acl-extended/prefixed/User",
		"/kafka-acl-changes", "/kafka-acl-extended-changes",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("InitPaths = %q", got)
	}
}

func TestEncodeEntries(t *testing.T) {
	cases := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"one", []Entry{ent("User:alice", "*", opRead, allow)},
			`{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"}],"version":1}`},
		{"sorted and deduplicated", []Entry{
			ent("User:bob", "host1", opDescribeConfigs, deny),
			ent("User:alice", "*", opIdempotentWrite, allow),
			ent("User:bob", "host1", opDescribeConfigs, deny),
		}, `{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"IdempotentWrite"},` +
			`{"principal":"User:bob","permissionType":"Deny","host":"host1","operation":"DescribeConfigs"}],"version":1}`},
		{"empty", nil, `{"acls":[],"version":1}`},
		// Jackson's escaping: short forms, \u00XX upper-case, nothing else.
		{"escapes", []Entry{ent("User:a\"b\\c\n\t\b\f\r\x01\x1f</>&\u2028é", "*", opAll, allow)},
			`{"acls":[{"principal":"User:a\"b\\c\n\t\b\f\r\u0001\u001F</>&` + "\u2028é" + `","permissionType":"Allow","host":"*","operation":"All"}],"version":1}`},
		{"invalid UTF-8", []Entry{ent("User:\xff", "*", opAll, allow)},
			`{"acls":[{"principal":"User:` + "\uFFFD" + `","permissionType":"Allow","host":"*","operation":"All"}],"version":1}`},
		{"unknown codes", []Entry{ent("User:a", "*", kmsg.ACLOperationUnknown, kmsg.ACLPermissionTypeUnknown)},
			`{"acls":[{"principal":"User:a","permissionType":"Unknown","host":"*","operation":"Unknown"}],"version":1}`},
	}
	for _, c := range cases {
		if got := string(EncodeEntries(c.entries)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// javaHashMapOrder is the iteration order of a java.util.HashMap (default
// capacity 16) holding keys, put in the given order: by bucket of
// String.hashCode spread as HashMap.hash does, ties in put order.
func javaHashMapOrder(keys []string) []string {
	bucket := func(s string) uint32 {
		var h uint32
		for _, u := range utf16.Encode([]rune(s)) {
			h = 31*h + uint32(u)
		}
		return (h ^ h>>16) & 15
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int { return int(bucket(a)) - int(bucket(b)) })
	return out
}

// The key order EncodeEntries writes is the one Jackson gets from the
// HashMaps of AclEntry.toJsonCompatibleMap and AclEntry.toMap (keys put in
// that code's order).
func TestEncodeEntriesKeyOrder(t *testing.T) {
	if got := javaHashMapOrder([]string{"version", "acls"}); !reflect.DeepEqual(got, []string{"acls", "version"}) {
		t.Errorf("top-level order %q", got)
	}
	if got := javaHashMapOrder([]string{"principal", "permissionType", "operation", "host"}); !reflect.DeepEqual(got, []string{"principal", "permissionType", "host", "operation"}) {
		t.Errorf("entry order %q", got)
	}
}

func TestDecodeEntries(t *testing.T) {
	aliceDenyHost1 := ent("User:alice", "host1", opRead, deny)
	bobAllow := ent("User:bob", "*", opRead, allow)
	bobDenyHost1 := ent("User:bob", "host1", opRead, deny)
	cases := []struct {
		name    string
		data    string
		want    []Entry
		wantErr bool
	}{
		// AclEntryTest.AclJson: spaces, key order and operation casing vary.
		{"AclEntryTest", `{"version": 1, "acls": [{"host": "host1","permissionType": "Deny","operation": "READ", "principal": "User:alice"  },
    {  "host":  "*" ,  "permissionType": "Allow",  "operation":  "Read", "principal": "User:bob"  },
    {  "host": "host1",  "permissionType": "Deny",  "operation":   "Read" ,  "principal": "User:bob"}]}`,
			normalizeEntries([]Entry{aliceDenyHost1, bobAllow, bobDenyHost1}), false},
		// ZkData's documented example.
		{"ZkData example", `{"version": 1, "acls": [ { "host":"host1", "permissionType": "Allow","operation": "Read","principal": "User:alice"}]}`,
			[]Entry{ent("User:alice", "host1", opRead, allow)}, false},
		{"our own output", string(EncodeEntries([]Entry{bobAllow})), []Entry{bobAllow}, false},
		{"names any casing", `{"version":1,"acls":[{"principal":"User:a","permissionType":"ALLOW","host":"*","operation":"clusteraction"}]}`,
			[]Entry{ent("User:a", "*", opClusterAction, allow)}, false},
		{"enum spelling is unknown", `{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","host":"*","operation":"CLUSTER_ACTION"}]}`,
			[]Entry{ent("User:a", "*", kmsg.ACLOperationUnknown, allow)}, false},
		{"duplicates collapse", `{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","host":"*","operation":"Read"},{"principal":"User:a","permissionType":"Allow","host":"*","operation":"READ"}]}`,
			[]Entry{ent("User:a", "*", opRead, allow)}, false},
		{"extra keys and trailing content ignored", `{"x":[1],"version":1,"acls":[]} trailing junk`, []Entry{}, false},
		{"empty data", ``, nil, false},
		{"not JSON", `{"version":1,`, nil, false},
		{"invalid UTF-8 in a string", "{\"version\":1,\"acls\":[{\"principal\":\"User:\xff\",\"permissionType\":\"Allow\",\"host\":\"*\",\"operation\":\"Read\"}]}", nil, false},
		{"byte order mark", "\xEF\xBB\xBF{\"version\":1,\"acls\":[]}", []Entry{}, false},
		{"whitespace only", "  \n", nil, true},
		{"not an object", `[1]`, nil, true},
		{"null", `null`, nil, true},
		{"version 2", `{"version":2,"acls":[]}`, nil, true},
		{"version 1.0", `{"version":1.0,"acls":[]}`, nil, true},
		{"version string", `{"version":"1","acls":[]}`, nil, true},
		{"no version", `{"acls":[]}`, nil, true},
		{"no acls", `{"version":1}`, nil, true},
		{"acls not array", `{"version":1,"acls":{}}`, nil, true},
		{"item not object", `{"version":1,"acls":[1]}`, nil, true},
		{"missing host", `{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","operation":"Read"}]}`, nil, true},
		{"null host", `{"version":1,"acls":[{"principal":"User:a","permissionType":"Allow","host":null,"operation":"Read"}]}`, nil, true},
		{"bad principal", `{"version":1,"acls":[{"principal":"alice","permissionType":"Allow","host":"*","operation":"Read"}]}`, nil, true},
		{"key case matters", `{"Version":1,"acls":[]}`, nil, true},
		{"last duplicate key wins", `{"version":2,"version":1,"acls":[]}`, []Entry{}, false},
	}
	for _, c := range cases {
		got, err := DecodeEntries([]byte(c.data))
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", c.name, err, c.wantErr)
			continue
		}
		if !c.wantErr && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestChangeNotification(t *testing.T) {
	cases := []struct {
		p    ResourcePattern
		dir  string
		data string
	}{
		{lit(topic, "some-topic"), "/kafka-acl-changes", "TOPIC:some-topic"},
		{lit(txnID, "tx:1"), "/kafka-acl-changes", "TRANSACTIONAL_ID:tx:1"},
		{lit(cluster, ClusterName), "/kafka-acl-changes", "CLUSTER:kafka-cluster"},
		{pre(topic, "some-topic"), "/kafka-acl-extended-changes",
			`{"version":1,"resourceType":"TOPIC","name":"some-topic","patternType":"PREFIXED"}`},
		{pre(kmsg.ACLResourceTypeDelegationToken, `a"b`), "/kafka-acl-extended-changes",
			`{"version":1,"resourceType":"DELEGATION_TOKEN","name":"a\"b","patternType":"PREFIXED"}`},
	}
	for _, c := range cases {
		dir, prefix, data := ChangeNotification(c.p)
		if dir != c.dir || prefix != "acl_changes_" || string(data) != c.data {
			t.Errorf("ChangeNotification(%v) = %q %q %q", c.p, dir, prefix, data)
		}
		back, err := ParseChangeNotification(dir, data)
		if err != nil || back != c.p {
			t.Errorf("round trip of %v = %v, %v", c.p, back, err)
		}
	}
}

func TestParseChangeNotification(t *testing.T) {
	lc, ec := LiteralChangesPath, ExtendedChangesPath
	cases := []struct {
		name string
		dir  string
		data string
		want ResourcePattern
		ok   bool
	}{
		// LiteralAclStoreTest.shouldDecodeResourceUsingTwoPartLogic
		{"two-part logic", lc, "GROUP:PREFIXED:this, including the PREFIXED part, is a valid two part group name",
			lit(group, "PREFIXED:this, including the PREFIXED part, is a valid two part group name"), true},
		{"type any casing", lc, "Topic:foo", lit(topic, "foo"), true},
		{"pascal two-word type is not an enum name", lc, "TransactionalId:x", ResourcePattern{}, false},
		{"lower enum name", lc, "transactional_id:x", lit(txnID, "x"), true},
		{"empty name", lc, "TOPIC:", lit(topic, ""), true},
		{"no colon", lc, "TOPIC", ResourcePattern{}, false},
		{"unknown type", lc, "FOO:x", ResourcePattern{}, false},
		{"any type", lc, "ANY:x", ResourcePattern{}, false},
		{"invalid UTF-8 name", lc, "TOPIC:a\xffb", lit(topic, "a\uFFFDb"), true},
		{"extended literal", ec, `{"version":1,"resourceType":"TOPIC","name":"n","patternType":"LITERAL"}`, lit(topic, "n"), true},
		{"extended key order free, type casing free", ec, `{"patternType":"PREFIXED","name":"n","resourceType":"group"}`, pre(group, "n"), true},
		{"extended version 0", ec, `{"version":0,"resourceType":"TOPIC","name":"n","patternType":"PREFIXED"}`, pre(topic, "n"), true},
		{"extended version 1.9 truncates", ec, `{"version":1.9,"resourceType":"TOPIC","name":"n","patternType":"PREFIXED"}`, pre(topic, "n"), true},
		{"extended version 2", ec, `{"version":2,"resourceType":"TOPIC","name":"n","patternType":"PREFIXED"}`, ResourcePattern{}, false},
		{"extended version huge", ec, `{"version":1e12,"resourceType":"TOPIC","name":"n","patternType":"PREFIXED"}`, ResourcePattern{}, false},
		{"extended version string", ec, `{"version":"1","resourceType":"TOPIC","name":"n","patternType":"PREFIXED"}`, ResourcePattern{}, false},
		{"extended pattern type is case sensitive", ec, `{"version":1,"resourceType":"TOPIC","name":"n","patternType":"prefixed"}`, ResourcePattern{}, false},
		{"extended pattern match", ec, `{"version":1,"resourceType":"TOPIC","name":"n","patternType":"MATCH"}`, ResourcePattern{}, false},
		{"extended unknown field", ec, `{"version":1,"resourceType":"TOPIC","name":"n","patternType":"PREFIXED","x":1}`, ResourcePattern{}, false},
		{"extended missing name", ec, `{"version":1,"resourceType":"TOPIC","patternType":"PREFIXED"}`, ResourcePattern{}, false},
		{"extended null name", ec, `{"version":1,"resourceType":"TOPIC","name":null,"patternType":"PREFIXED"}`, ResourcePattern{}, false},
		{"extended name not string", ec, `{"version":1,"resourceType":"TOPIC","name":5,"patternType":"PREFIXED"}`, ResourcePattern{}, false},
		{"extended not JSON", ec, `TOPIC:foo`, ResourcePattern{}, false},
		{"extended not object", ec, `[]`, ResourcePattern{}, false},
		{"other directory", "/kafka-acl", "TOPIC:foo", ResourcePattern{}, false},
	}
	for _, c := range cases {
		got, err := ParseChangeNotification(c.dir, []byte(c.data))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("%s: got %v, %v", c.name, got, err)
		}
	}
}

func TestNames(t *testing.T) {
	ops := []string{"Unknown", "Any", "All", "Read", "Write", "Create", "Delete", "Alter", "Describe",
		"ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "CreateTokens", "DescribeTokens"}
	for i, n := range ops {
		op := kmsg.ACLOperation(i)
		if got := OperationName(op); got != n {
			t.Errorf("OperationName(%v) = %q, want %q", op, got, n)
		}
		for _, spelling := range []string{n, strings.ToUpper(n), strings.ToLower(n)} {
			if got := parseOperationName(spelling); got != op {
				t.Errorf("parseOperationName(%q) = %v", spelling, got)
			}
		}
	}
	types := []string{"Unknown", "Any", "Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User"}
	for i, n := range types {
		if got := ResourceTypeName(kmsg.ACLResourceType(i)); got != n {
			t.Errorf("ResourceTypeName(%d) = %q, want %q", i, got, n)
		}
		if got := ParseResourceTypeName(strings.ToLower(n)); got != kmsg.ACLResourceType(i) {
			t.Errorf("ParseResourceTypeName(%q) = %v", strings.ToLower(n), got)
		}
	}
	if ResourceTypeName(100) != "Unknown" || OperationName(-1) != "Unknown" || PermissionName(7) != "Unknown" {
		t.Error("out-of-range codes must be named Unknown")
	}
	if PermissionName(allow) != "Allow" || PermissionName(deny) != "Deny" || parsePermissionName("deny") != deny {
		t.Error("permission names")
	}
	if parseOperationName("nope") != kmsg.ACLOperationUnknown {
		t.Error("unknown names are UNKNOWN")
	}
}
