package acl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ChangeNotification is the sequential znode a broker creates after
// changing a storable pattern's ACLs (ZkAclChangeStore.createChangeNode): create
// dir+"/"+prefix with data, PERSISTENT_SEQUENTIAL.
//
//   - LITERAL patterns go to /kafka-acl-changes with the legacy data
//     "<RESOURCE_TYPE>:<name>", the Java enum constant name ("TOPIC:foo",
//     "TRANSACTIONAL_ID:tx"), since ResourceType has no toString of its own.
//   - Other patterns go to /kafka-acl-extended-changes with the JSON of
//     ExtendedAclChangeEvent, Jackson's field order being the case class's:
//     {"version":1,"resourceType":"TOPIC","name":"foo","patternType":"PREFIXED"}.
func ChangeNotification(p ResourcePattern) (dir, prefix string, data []byte) {
	t := resourceTypeEnumNames[resourceTypeFromCode(p.Type)]
	if p.PatternType == kmsg.ACLResourcePatternTypeLiteral {
		// javaUTF8: Kafka's name is a Java string, which holds no invalid UTF-8.
		return LiteralChangesPath, ChangeSequencePrefix, []byte(t + ":" + javaUTF8([]byte(p.Name)))
	}
	var b bytes.Buffer
	b.WriteString(`{"version":1,"resourceType":`)
	writeJacksonString(&b, t)
	b.WriteString(`,"name":`)
	writeJacksonString(&b, p.Name)
	b.WriteString(`,"patternType":`)
	writeJacksonString(&b, patternTypeEnumNames[patternTypeFromCode(p.PatternType)])
	b.WriteByte('}')
	return ExtendedChangesPath, ChangeSequencePrefix, b.Bytes()
}

var errChange = errors.New("acl: change notification")

// ParseChangeNotification reads the data of a change znode found under dir
// (LiteralChangesPath or ExtendedChangesPath) into the pattern whose znode
// the broker must re-read, following ZkAclChangeStore.decode:
//
//   - Literal: "<type>:<name>" split at the first colon, the type read by
//     ResourceType.fromString (any casing of the enum name, so
//     "TransactionalId" is not a type there but "transactional_id" is).
//   - Extended: a JSON object with "resourceType" (as above), "name" and
//     "patternType" (the exact enum name, "PREFIXED"; "LITERAL" is accepted
//     too, as Kafka does), and "version" at most 1 if present; unknown keys
//     are an error, as Jackson's bean decoding fails on them.
//
// Patterns Kafka could decode but never store (UNKNOWN types) are errors
// here: Kafka would re-read a znode that cannot exist and change nothing.
func ParseChangeNotification(dir string, data []byte) (ResourcePattern, error) {
	switch dir {
	case LiteralChangesPath:
		return parseLiteralChange(data)
	case ExtendedChangesPath:
		return parseExtendedChange(data)
	}
	return ResourcePattern{}, fmt.Errorf("%w: unknown directory %q", errChange, dir)
}

func parseLiteralChange(data []byte) (ResourcePattern, error) {
	s := javaUTF8(data)
	typeName, name, ok := strings.Cut(s, ":")
	if !ok {
		return ResourcePattern{}, fmt.Errorf("%w: expected a string in format ResourceType:ResourceName but got %q", errChange, s)
	}
	p := ResourcePattern{Type: resourceTypeFromEnumString(typeName), Name: name, PatternType: kmsg.ACLResourcePatternTypeLiteral}
	if !storable(p) {
		return ResourcePattern{}, fmt.Errorf("%w: unknown resource type %q", errChange, typeName)
	}
	return p, nil
}

func parseExtendedChange(data []byte) (ResourcePattern, error) {
	raw, ok := firstJSONValue(data)
	if !ok {
		return ResourcePattern{}, fmt.Errorf("%w: not JSON", errChange)
	}
	obj, ok := jsonObjectOf(raw)
	if !ok {
		return ResourcePattern{}, fmt.Errorf("%w: not a JSON object", errChange)
	}
	var typeName, name, patternName *string
	for k, v := range obj {
		var dst **string
		switch k {
		case "version":
			if err := checkChangeVersion(v); err != nil {
				return ResourcePattern{}, err
			}
			continue
		case "resourceType":
			dst = &typeName
		case "name":
			dst = &name
		case "patternType":
			dst = &patternName
		default:
			return ResourcePattern{}, fmt.Errorf("%w: unknown field %q", errChange, k)
		}
		if string(v) == "null" {
			continue
		}
		s, ok := jsonString(v)
		if !ok {
			return ResourcePattern{}, fmt.Errorf("%w: %q is not a string", errChange, k)
		}
		*dst = &s
	}
	if typeName == nil || name == nil || patternName == nil {
		return ResourcePattern{}, fmt.Errorf("%w: resourceType, name and patternType are required", errChange)
	}
	p := ResourcePattern{
		Type:        resourceTypeFromEnumString(*typeName),
		Name:        *name,
		PatternType: patternTypeFromEnumString(*patternName),
	}
	if !storable(p) {
		return ResourcePattern{}, fmt.Errorf("%w: %q/%q is not a stored pattern kind", errChange, *typeName, *patternName)
	}
	return p, nil
}

// checkChangeVersion is ExtendedAclChangeEvent's "version > currentVersion"
// check on Jackson's int binding: null is 0, a fraction is truncated
// (ACCEPT_FLOAT_AS_INT), a value outside int32 fails. Jackson would also
// coerce a numeric string; we do not.
func checkChangeVersion(v json.RawMessage) error {
	if string(v) == "null" {
		return nil
	}
	var f float64
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || json.Unmarshal(v, &f) != nil {
		return fmt.Errorf("%w: version is not a number", errChange)
	}
	if f < math.MinInt32 || f >= math.MaxInt32+1 {
		return fmt.Errorf("%w: version %s is out of int range", errChange, v)
	}
	if int32(f) > 1 {
		return fmt.Errorf("%w: unsupported version %s", errChange, v)
	}
	return nil
}

// javaUTF8 is new String(bytes, UTF_8): each malformed byte becomes U+FFFD.
func javaUTF8(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	var b strings.Builder
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		b.WriteRune(r)
		data = data[size:]
	}
	return b.String()
}
