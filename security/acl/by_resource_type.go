package acl

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AuthorizeByResourceType reports whether principal from host may perform
// op on at least one resource of type t (KIP-679; used for the
// IDEMPOTENT_WRITE fallback of InitProducerId and similar "any resource"
// checks). It follows AclAuthorizer's own override of
// Authorizer.authorizeByResourceType, which is what a ZooKeeper-mode broker
// runs:
//
//   - op must be concrete and t a concrete type, else false (Kafka throws).
//   - Super users: true.
//   - Only entries whose principal is principal or "User:*", whose host is
//     host or "*", and whose operation is exactly op or ALL count; there are
//     no implied operations here (an ALLOW of READ does not count for
//     DESCRIBE).
//   - A DENY on the literal wildcard "*": false.
//   - AllowEveryoneIfNoACLFound: true.
//   - Without any DENY: true iff some ALLOW exists.
//   - Otherwise true iff some ALLOW survives the denies: the literal "*";
//     another literal that is not denied literally and has no denied
//     prefix; or a prefix none of whose prefixes (itself included) is
//     denied as a prefix.
//
// Unlike the interface's default implementation, it does not first try
// Authorize on a placeholder resource, so implied operations never count.
func (a *Authorizer) AuthorizeByResourceType(principal, host string, op kmsg.ACLOperation, t kmsg.ACLResourceType) bool {
	if t = resourceTypeFromCode(t); t == kmsg.ACLResourceTypeAny || t == kmsg.ACLResourceTypeUnknown {
		return false
	}
	if op = operationFromCode(op); op == kmsg.ACLOperationAny || op == kmsg.ACLOperationUnknown {
		return false
	}
	if a.isSuperUser(principal) {
		return true
	}
	a.mu.RLock()
	defer a.mu.RUnlock()

	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	deny, allow := kmsg.ACLPermissionTypeDeny, kmsg.ACLPermissionTypeAllow
	denyLiterals := a.matchingNames(principal, host, op, deny, t, lit)
	if anyContains(denyLiterals, WildcardResource) {
		return false
	}
	if a.allowEveryone {
		return true
	}
	denyPrefixes := a.matchingNames(principal, host, op, deny, t, pre)
	allowPrefixes := a.matchingNames(principal, host, op, allow, t, pre)
	allowLiterals := a.matchingNames(principal, host, op, allow, t, lit)
	if len(denyLiterals) == 0 && len(denyPrefixes) == 0 {
		return len(allowPrefixes) > 0 || len(allowLiterals) > 0
	}
	for _, set := range allowPrefixes {
		for name := range set {
			if !dominantPrefixDeny(name, denyPrefixes) {
				return true
			}
		}
	}
	for _, set := range allowLiterals {
		for name := range set {
			if name == WildcardResource ||
				(!anyContains(denyLiterals, name) && !dominantPrefixDeny(name, denyPrefixes)) {
				return true
			}
		}
	}
	return false
}

// matchingNames is AclAuthorizer.matchingResources: the name sets of the
// index keys for {principal, "User:*"} × {host, "*"} × {op, ALL}. Caller
// holds a.mu.
func (a *Authorizer) matchingNames(principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType,
	t kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType) []map[string]bool {
	var out []map[string]bool
	for _, p := range dedup2(principal, WildcardPrincipal) {
		for _, h := range dedup2(host, WildcardHost) {
			for _, o := range []kmsg.ACLOperation{op, kmsg.ACLOperationAll}[:opCount(op)] {
				k := typeKey{Entry{Principal: p, Host: h, Operation: o, Permission: perm}, t, pt}
				if set := a.byType[k]; len(set) > 0 {
					out = append(out, set)
				}
			}
		}
	}
	return out
}

// dedup2 and opCount keep each key once, as Kafka's Set(...) of the two
// candidates does; a set seen twice would not change any answer, but
// keeping them single is cheap.
func dedup2(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func opCount(op kmsg.ACLOperation) int {
	if op == kmsg.ACLOperationAll {
		return 1
	}
	return 2
}

func anyContains(sets []map[string]bool, name string) bool {
	for _, s := range sets {
		if s[name] {
			return true
		}
	}
	return false
}

// dominantPrefixDeny is AclAuthorizer.hasDominantPrefixedDeny: is some
// non-empty prefix of name (name included) a denied prefix?
func dominantPrefixDeny(name string, denyPrefixes []map[string]bool) bool {
	for _, s := range denyPrefixes {
		for d := range s {
			if d != "" && strings.HasPrefix(name, d) {
				return true
			}
		}
	}
	return false
}
