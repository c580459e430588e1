package acl

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka has two spellings of its ACL enums. Znode paths and the ACL JSON
// use SecurityUtils' Pascal case ("TransactionalId", "DescribeConfigs",
// "Allow"); change notifications use the Java enum constant names
// ("TRANSACTIONAL_ID", "PREFIXED"). The tables below are indexed by the kmsg
// (= Kafka wire) code.

var resourceTypeEnumNames = [...]string{
	"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER",
}

var patternTypeEnumNames = [...]string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}

var operationEnumNames = [...]string{
	"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
	"CREATE_TOKENS", "DESCRIBE_TOKENS",
}

var permissionEnumNames = [...]string{"UNKNOWN", "ANY", "DENY", "ALLOW"}

// pascalCase is SecurityUtils.toPascalCase: "DESCRIBE_CONFIGS" becomes
// "DescribeConfigs".
func pascalCase(enumName string) string {
	var b strings.Builder
	up := true
	for _, c := range enumName {
		switch {
		case c == '_':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(c)))
			up = false
		default:
			b.WriteString(strings.ToLower(string(c)))
		}
	}
	return b.String()
}

// ResourceTypeName is the Pascal-case name Kafka uses in znode paths
// ("Topic", "TransactionalId"); unknown codes are named "Unknown".
func ResourceTypeName(t kmsg.ACLResourceType) string {
	return pascalCase(resourceTypeEnumNames[resourceTypeFromCode(t)])
}

// OperationName is the Pascal-case operation name of the ACL JSON ("Read",
// "IdempotentWrite").
func OperationName(o kmsg.ACLOperation) string {
	return pascalCase(operationEnumNames[operationFromCode(o)])
}

// PermissionName is the Pascal-case permission name of the ACL JSON.
func PermissionName(p kmsg.ACLPermissionType) string {
	return pascalCase(permissionEnumNames[permissionFromCode(p)])
}

// lookupPascal is SecurityUtils.valueFromMap: the exact Pascal-case name
// first, then the upper-cased key against the upper-cased Pascal names
// (so "READ", "read" and "IDEMPOTENTWRITE" work but "IDEMPOTENT_WRITE"
// does not). Names it does not know are UNKNOWN (code 0), not an error.
func lookupPascal(names []string, key string) int {
	for i, n := range names {
		if pascalCase(n) == key {
			return i
		}
	}
	up := strings.ToUpper(key)
	for i, n := range names {
		if strings.ToUpper(pascalCase(n)) == up {
			return i
		}
	}
	return 0
}

// ParseResourceTypeName reads a resource type the way SecurityUtils.
// resourceType does (used for the type level of the ACL znode tree).
func ParseResourceTypeName(s string) kmsg.ACLResourceType {
	return kmsg.ACLResourceType(lookupPascal(resourceTypeEnumNames[:], s))
}

func parseOperationName(s string) kmsg.ACLOperation {
	return kmsg.ACLOperation(lookupPascal(operationEnumNames[:], s))
}

func parsePermissionName(s string) kmsg.ACLPermissionType {
	return kmsg.ACLPermissionType(lookupPascal(permissionEnumNames[:], s))
}

// resourceTypeFromEnumString is ResourceType.fromString: valueOf of the
// upper-cased string, UNKNOWN when no constant has that name.
func resourceTypeFromEnumString(s string) kmsg.ACLResourceType {
	up := strings.ToUpper(s)
	for i, n := range resourceTypeEnumNames {
		if n == up {
			return kmsg.ACLResourceType(i)
		}
	}
	return kmsg.ACLResourceTypeUnknown
}

// patternTypeFromEnumString is PatternType.fromString, which, unlike the
// other enums, is case sensitive.
func patternTypeFromEnumString(s string) kmsg.ACLResourcePatternType {
	for i, n := range patternTypeEnumNames {
		if n == s {
			return kmsg.ACLResourcePatternType(i)
		}
	}
	return kmsg.ACLResourcePatternTypeUnknown
}
