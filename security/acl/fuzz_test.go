package acl

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeEntries: decoding never panics, and whatever decodes re-encodes
// to data that decodes to the same set (Kafka could read what we write).
func FuzzDecodeEntries(f *testing.F) {
	f.Add([]byte(`{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"}],"version":1}`))
	f.Add([]byte(`{"version": 1, "acls": [ { "host":"host1", "permissionType": "Deny","operation": "READ","principal": "User:alice"}]}`))
	f.Add([]byte(`{"version":1,"acls":[]}`))
	f.Add([]byte(`{"version":2,"acls":[]}`))
	f.Add([]byte(`not json`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeEntries(data)
		if err != nil {
			return
		}
		enc := EncodeEntries(entries)
		again, err := DecodeEntries(enc)
		if err != nil {
			t.Fatalf("re-decoding %q: %v", enc, err)
		}
		if len(entries) == 0 && len(again) == 0 {
			return
		}
		if !reflect.DeepEqual(entries, again) {
			t.Fatalf("round trip changed the set:\n%v\n%v", entries, again)
		}
		if !bytes.Equal(EncodeEntries(again), enc) {
			t.Fatalf("encoding is not stable")
		}
	})
}

// FuzzParseZnodePath: whatever parses maps back to the same path, up to the
// spelling of the resource type.
func FuzzParseZnodePath(f *testing.F) {
	for _, s := range []string{
		"/kafka-acl/Topic/foo", "/kafka-acl-extended/prefixed/Group/app-", "/kafka-acl/Cluster/kafka-cluster",
		"/kafka-acl/TRANSACTIONALID/tx", "/kafka-acl/Topic/a/b", "/kafka-acl/Unknown/x", "/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := ParseZnodePath(path)
		if err != nil {
			return
		}
		back, err := ZnodePath(p)
		if err != nil {
			t.Fatalf("ZnodePath(%v): %v", p, err)
		}
		again, err := ParseZnodePath(back)
		if err != nil || again != p {
			t.Fatalf("%q -> %v -> %q -> %v, %v", path, p, back, again, err)
		}
		if !strings.HasSuffix(path, "/"+p.Name) {
			t.Fatalf("name %q is not the last element of %q", p.Name, path)
		}
	})
}

// FuzzParseChangeNotification: whatever parses is a storable pattern, and
// its own notification parses back to it.
func FuzzParseChangeNotification(f *testing.F) {
	f.Add(true, []byte("TOPIC:some-topic"))
	f.Add(true, []byte("GROUP:PREFIXED:two part"))
	f.Add(true, []byte("transactional_id:x"))
	f.Add(false, []byte(`{"version":1,"resourceType":"TOPIC","name":"foo","patternType":"PREFIXED"}`))
	f.Add(false, []byte(`{"version":1,"resourceType":"GROUP","name":"g","patternType":"LITERAL"}`))
	f.Add(false, []byte(`{"version":2}`))
	f.Fuzz(func(t *testing.T, literalDir bool, data []byte) {
		dir := ExtendedChangesPath
		if literalDir {
			dir = LiteralChangesPath
		}
		p, err := ParseChangeNotification(dir, data)
		if err != nil {
			return
		}
		if !storable(p) {
			t.Fatalf("parsed an unstorable pattern %v", p)
		}
		d2, _, data2 := ChangeNotification(p)
		again, err := ParseChangeNotification(d2, data2)
		if err != nil || again != p {
			t.Fatalf("%v -> %q %q -> %v, %v", p, d2, data2, again, err)
		}
	})
}
