package acl

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// PatternFilter selects resource patterns (Kafka's ResourcePatternFilter).
// Type ANY matches every type; a nil Name matches every name; PatternType
// ANY matches LITERAL and PREFIXED patterns with exactly Name, while MATCH
// matches every pattern that would apply to a resource called Name: the
// literal Name, the literal wildcard "*", and every prefix of Name.
type PatternFilter struct {
	Type        kmsg.ACLResourceType
	Name        *string
	PatternType kmsg.ACLResourcePatternType
}

// EntryFilter selects entries (Kafka's AccessControlEntryFilter). A nil
// Principal or Host matches anything; Operation and Permission ANY match
// anything. Principal "User:*" is compared as a string: it selects entries
// on the wildcard principal, not every principal.
type EntryFilter struct {
	Principal  *string
	Host       *string
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

// BindingFilter selects bindings (Kafka's AclBindingFilter).
type BindingFilter struct {
	Pattern PatternFilter
	Entry   EntryFilter
}

// AnyFilter matches every binding (Kafka's AclBindingFilter.ANY).
var AnyFilter = BindingFilter{
	Pattern: PatternFilter{Type: kmsg.ACLResourceTypeAny, PatternType: kmsg.ACLResourcePatternTypeAny},
	Entry:   EntryFilter{Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny},
}

// Filter is the filter that matches exactly this pattern
// (ResourcePattern.toFilter).
func (p ResourcePattern) Filter() PatternFilter {
	name := p.Name
	return PatternFilter{Type: p.Type, Name: &name, PatternType: p.PatternType}
}

// Filter is the filter that matches exactly this entry.
func (e Entry) Filter() EntryFilter {
	principal, host := e.Principal, e.Host
	return EntryFilter{Principal: &principal, Host: &host, Operation: e.Operation, Permission: e.Permission}
}

// Filter is the filter that matches exactly this binding
// (AclBinding.toFilter).
func (b Binding) Filter() BindingFilter {
	return BindingFilter{Pattern: b.Pattern.Filter(), Entry: b.Entry.Filter()}
}

// Matches is ResourcePatternFilter.matches. Filter codes Kafka does not know
// (UNKNOWN or out of range) match nothing.
func (f PatternFilter) Matches(p ResourcePattern) bool {
	ft, fp := resourceTypeFromCode(f.Type), patternTypeFromCode(f.PatternType)
	if ft != kmsg.ACLResourceTypeAny && ft != p.Type {
		return false
	}
	if fp != kmsg.ACLResourcePatternTypeAny && fp != kmsg.ACLResourcePatternTypeMatch && fp != p.PatternType {
		return false
	}
	if f.Name == nil {
		return true
	}
	name := *f.Name
	if fp == kmsg.ACLResourcePatternTypeAny || fp == p.PatternType {
		return name == p.Name
	}
	// Only MATCH gets here.
	switch p.PatternType {
	case kmsg.ACLResourcePatternTypeLiteral:
		return name == p.Name || p.Name == WildcardResource
	case kmsg.ACLResourcePatternTypePrefixed:
		return strings.HasPrefix(name, p.Name)
	}
	// Kafka throws for a stored pattern that is neither; the cache holds
	// none, so refusing the match is the safe reading.
	return false
}

// Matches is AccessControlEntryFilter.matches.
func (f EntryFilter) Matches(e Entry) bool {
	if f.Principal != nil && *f.Principal != e.Principal {
		return false
	}
	if f.Host != nil && *f.Host != e.Host {
		return false
	}
	if op := operationFromCode(f.Operation); op != kmsg.ACLOperationAny && op != e.Operation {
		return false
	}
	perm := permissionFromCode(f.Permission)
	return perm == kmsg.ACLPermissionTypeAny || perm == e.Permission
}

// Matches is AclBindingFilter.matches.
func (f BindingFilter) Matches(b Binding) bool {
	return f.Pattern.Matches(b.Pattern) && f.Entry.Matches(b.Entry)
}

// IndefiniteField is ResourcePatternFilter.findIndefiniteField: why the
// filter may match more than one pattern, or "" if it matches at most one.
func (f PatternFilter) IndefiniteField() string {
	switch {
	case resourceTypeFromCode(f.Type) == kmsg.ACLResourceTypeAny:
		return "Resource type is ANY."
	case resourceTypeFromCode(f.Type) == kmsg.ACLResourceTypeUnknown:
		return "Resource type is UNKNOWN."
	case f.Name == nil:
		return "Resource name is NULL."
	case patternTypeFromCode(f.PatternType) == kmsg.ACLResourcePatternTypeMatch:
		return "Resource pattern type is MATCH."
	case patternTypeFromCode(f.PatternType) == kmsg.ACLResourcePatternTypeUnknown:
		return "Resource pattern type is UNKNOWN."
	}
	return ""
}

// MatchesAtMostOne reports whether the filter names at most one pattern
// (ResourcePatternFilter.matchesAtMostOne). Note that PatternType ANY still
// counts as definite: it names the LITERAL and the PREFIXED pattern of one
// name, which is how Kafka treats it.
func (f PatternFilter) MatchesAtMostOne() bool { return f.IndefiniteField() == "" }

// IndefiniteField is AccessControlEntryFilter.findIndefiniteField.
func (f EntryFilter) IndefiniteField() string {
	switch {
	case f.Principal == nil:
		return "Principal is NULL"
	case f.Host == nil:
		return "Host is NULL"
	case operationFromCode(f.Operation) == kmsg.ACLOperationAny:
		return "Operation is ANY"
	case operationFromCode(f.Operation) == kmsg.ACLOperationUnknown:
		return "Operation is UNKNOWN"
	case permissionFromCode(f.Permission) == kmsg.ACLPermissionTypeAny:
		return "Permission type is ANY"
	case permissionFromCode(f.Permission) == kmsg.ACLPermissionTypeUnknown:
		return "Permission type is UNKNOWN"
	}
	return ""
}

// MatchesAtMostOne is AccessControlEntryFilter.matchesAtMostOne.
func (f EntryFilter) MatchesAtMostOne() bool { return f.IndefiniteField() == "" }

// IndefiniteField is AclBindingFilter.findIndefiniteField.
func (f BindingFilter) IndefiniteField() string {
	if s := f.Pattern.IndefiniteField(); s != "" {
		return s
	}
	return f.Entry.IndefiniteField()
}

// MatchesAtMostOne is AclBindingFilter.matchesAtMostOne.
func (f BindingFilter) MatchesAtMostOne() bool { return f.IndefiniteField() == "" }

// definiteResources is AclAuthorizer.filterToResources for a filter whose
// pattern part matches at most one pattern: the patterns it names, which
// DeleteAcls must consider even if the cache has not seen them yet.
func (f PatternFilter) definiteResources() []ResourcePattern {
	if !f.MatchesAtMostOne() {
		return nil
	}
	t, name := resourceTypeFromCode(f.Type), *f.Name
	switch pt := patternTypeFromCode(f.PatternType); pt {
	case kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed:
		return []ResourcePattern{{Type: t, Name: name, PatternType: pt}}
	case kmsg.ACLResourcePatternTypeAny:
		return []ResourcePattern{
			{Type: t, Name: name, PatternType: kmsg.ACLResourcePatternTypeLiteral},
			{Type: t, Name: name, PatternType: kmsg.ACLResourcePatternTypePrefixed},
		}
	}
	return nil
}
