package acl

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	// WildcardResource is the literal resource name that matches every
	// resource of its type (Kafka's ResourcePattern.WILDCARD_RESOURCE).
	WildcardResource = "*"
	// WildcardPrincipal matches every principal (Kafka's AclEntry).
	WildcardPrincipal = "User:*"
	// WildcardHost matches every client host (Kafka's AclEntry).
	WildcardHost = "*"
	// ClusterName is the only name a CLUSTER resource has (Kafka's
	// Resource.CLUSTER_NAME).
	ClusterName = "kafka-cluster"
)

// ResourcePattern is a stored ACL's resource: a type, a name and whether the
// name is LITERAL (exact, or "*" for every resource) or PREFIXED.
type ResourcePattern struct {
	Type        kmsg.ACLResourceType
	Name        string
	PatternType kmsg.ACLResourcePatternType
}

// Entry is one access control entry: principal ("User:alice"), host ("*"
// for any), operation and ALLOW or DENY.
type Entry struct {
	Principal  string
	Host       string
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

// Binding is an entry attached to a resource pattern (Kafka's AclBinding).
type Binding struct {
	Pattern ResourcePattern
	Entry   Entry
}

// Resource is a concrete resource a request acts on; authorizing it always
// uses a LITERAL name (Kafka's authorizeAction refuses anything else).
type Resource struct {
	Type kmsg.ACLResourceType
	Name string
}

// The fromCode helpers map wire codes Kafka does not know to UNKNOWN, as
// ResourceType.fromCode and friends do: a byte 99 becomes UNKNOWN, while
// the wire value 0 is UNKNOWN already.

func resourceTypeFromCode(t kmsg.ACLResourceType) kmsg.ACLResourceType {
	if t < kmsg.ACLResourceTypeUnknown || t > kmsg.ACLResourceTypeUser {
		return kmsg.ACLResourceTypeUnknown
	}
	return t
}

func patternTypeFromCode(t kmsg.ACLResourcePatternType) kmsg.ACLResourcePatternType {
	if t < kmsg.ACLResourcePatternTypeUnknown || t > kmsg.ACLResourcePatternTypePrefixed {
		return kmsg.ACLResourcePatternTypeUnknown
	}
	return t
}

func operationFromCode(o kmsg.ACLOperation) kmsg.ACLOperation {
	if o < kmsg.ACLOperationUnknown || o > kmsg.ACLOperationDescribeTokens {
		return kmsg.ACLOperationUnknown
	}
	return o
}

func permissionFromCode(p kmsg.ACLPermissionType) kmsg.ACLPermissionType {
	if p < kmsg.ACLPermissionTypeUnknown || p > kmsg.ACLPermissionTypeAllow {
		return kmsg.ACLPermissionTypeUnknown
	}
	return p
}

// isUnknown is AclBinding.isUnknown: any UNKNOWN part (after code mapping).
func (b Binding) isUnknown() bool {
	return resourceTypeFromCode(b.Pattern.Type) == kmsg.ACLResourceTypeUnknown ||
		patternTypeFromCode(b.Pattern.PatternType) == kmsg.ACLResourcePatternTypeUnknown ||
		operationFromCode(b.Entry.Operation) == kmsg.ACLOperationUnknown ||
		permissionFromCode(b.Entry.Permission) == kmsg.ACLPermissionTypeUnknown
}

// validPrincipal is what SecurityUtils.parseKafkaPrincipal accepts: a
// non-empty "type:name" (the name may be empty or contain more colons).
func validPrincipal(p string) bool {
	return strings.Contains(p, ":")
}

// comparePatterns is AclAuthorizer's ResourceOrdering: resource type, then
// pattern type, then name in reverse order. DescribeAcls lists resources in
// this order because AclAuthorizer's cache is a TreeMap sorted by it.
func comparePatterns(a, b ResourcePattern) int {
	switch {
	case a.Type != b.Type:
		return cmp.Compare(a.Type, b.Type)
	case a.PatternType != b.PatternType:
		return cmp.Compare(a.PatternType, b.PatternType)
	default:
		return -strings.Compare(a.Name, b.Name)
	}
}

// compareEntries orders entries inside one resource. Kafka keeps them in a
// hash set, so any fixed order is as good; this one reads naturally.
func compareEntries(a, b Entry) int {
	if c := strings.Compare(a.Principal, b.Principal); c != 0 {
		return c
	}
	if c := strings.Compare(a.Host, b.Host); c != 0 {
		return c
	}
	if a.Operation != b.Operation {
		return cmp.Compare(a.Operation, b.Operation)
	}
	return cmp.Compare(a.Permission, b.Permission)
}

func compareBindings(a, b Binding) int {
	if c := comparePatterns(a.Pattern, b.Pattern); c != 0 {
		return c
	}
	return compareEntries(a.Entry, b.Entry)
}

// normalizeEntries makes entries a set: sorted, without duplicates. The
// result never aliases the argument.
func normalizeEntries(entries []Entry) []Entry {
	out := slices.Clone(entries)
	slices.SortFunc(out, compareEntries)
	return slices.Compact(out)
}

// MergeEntries is the entry set of a resource after CreateAcls adds entries
// to it (AclAuthorizer.createAcls: currentAcls ++ newAcls): the union,
// sorted, without duplicates.
func MergeEntries(current, added []Entry) []Entry {
	return normalizeEntries(append(slices.Clone(current), added...))
}
