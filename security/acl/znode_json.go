package acl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// EncodeEntries is the data of a resource znode, byte for byte what Kafka
// 3.9 writes (ResourceZNode.encode):
//
//	{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"}],"version":1}
//
// AclEntry.toJsonCompatibleMap builds java.util.HashMaps, so Jackson writes
// the keys in HashMap bucket order, not in the order they are put; for
// these key sets that order is fixed (see TestEncodeEntriesKeyOrder). The
// entries are written in EncodeEntries' sorted set order (Kafka's is that of
// a hash set; readers do not care).
func EncodeEntries(entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString(`{"acls":[`)
	for i, e := range normalizeEntries(entries) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"principal":`)
		writeJacksonString(&b, e.Principal)
		b.WriteString(`,"permissionType":`)
		writeJacksonString(&b, PermissionName(e.Permission))
		b.WriteString(`,"host":`)
		writeJacksonString(&b, e.Host)
		b.WriteString(`,"operation":`)
		writeJacksonString(&b, OperationName(e.Operation))
		b.WriteByte('}')
	}
	b.WriteString(`],"version":1}`)
	return b.Bytes()
}

// errEntries is the class of DecodeEntries errors.
var errEntries = errors.New("acl: resource znode data")

// DecodeEntries reads a resource znode's data as AclEntry.fromBytes does,
// returning the entry set sorted:
//
//   - No data, or data that is not JSON at all: no entries, no error (Kafka
//     reads both as an empty ACL set).
//   - Otherwise the first JSON value must be an object with "version" the
//     integer 1 and "acls" an array of objects, each with string
//     "principal" ("type:name"), "permissionType", "host" and "operation";
//     anything else is an error, as Kafka throws. Other keys are ignored,
//     and so is content after the first value.
//   - Operation and permission names are read like SecurityUtils does
//     ("Read", "READ", "read", "IdempotentWrite", "IDEMPOTENTWRITE"); names
//     it does not know become UNKNOWN entries rather than errors.
func DecodeEntries(data []byte) ([]Entry, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		// Jackson reads this as a missing node, which is not an object.
		return nil, fmt.Errorf("%w: no JSON value", errEntries)
	}
	raw, ok := firstJSONValue(data)
	if !ok {
		return nil, nil
	}
	top, ok := jsonObjectOf(raw)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", errEntries)
	}
	// Kafka's DecodeInteger accepts only an int node: 1.0 and 1e0 fail. JSON
	// forbids leading zeros, so the token for the int 1 is exactly "1".
	if v, ok := top["version"]; !ok || string(v) != "1" {
		return nil, fmt.Errorf("%w: version must be 1", errEntries)
	}
	aclsRaw, ok := top["acls"]
	if !ok || len(aclsRaw) == 0 || aclsRaw[0] != '[' {
		return nil, fmt.Errorf("%w: acls must be an array", errEntries)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(aclsRaw, &items); err != nil {
		return nil, fmt.Errorf("%w: acls: %v", errEntries, err)
	}
	entries := make([]Entry, 0, len(items))
	for i, item := range items {
		e, err := decodeEntry(item)
		if err != nil {
			return nil, fmt.Errorf("%w: acls[%d]: %v", errEntries, i, err)
		}
		entries = append(entries, e)
	}
	return normalizeEntries(entries), nil
}

func decodeEntry(item json.RawMessage) (Entry, error) {
	obj, ok := jsonObjectOf(item)
	if !ok {
		return Entry{}, errors.New("not an object")
	}
	field := func(key string) (string, error) {
		raw, ok := obj[key]
		if !ok {
			return "", fmt.Errorf("no %q", key)
		}
		s, ok := jsonString(raw)
		if !ok {
			return "", fmt.Errorf("%q is not a string", key)
		}
		return s, nil
	}
	principal, err := field("principal")
	if err != nil {
		return Entry{}, err
	}
	if !validPrincipal(principal) {
		return Entry{}, fmt.Errorf("principal %q is not principalType:principalName", principal)
	}
	perm, err := field("permissionType")
	if err != nil {
		return Entry{}, err
	}
	host, err := field("host")
	if err != nil {
		return Entry{}, err
	}
	op, err := field("operation")
	if err != nil {
		return Entry{}, err
	}
	return Entry{Principal: principal, Host: host, Operation: parseOperationName(op), Permission: parsePermissionName(perm)}, nil
}
