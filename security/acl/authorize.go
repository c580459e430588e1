package acl

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Authorize is AclAuthorizer.authorize for one action: may principal
// ("User:alice"), connecting from host (the client's IP address as text),
// perform op on r?
//
//   - Super users may do everything.
//   - The ACLs that apply to r are those of the literal pattern r.Name, of
//     the literal wildcard "*", and of every PREFIXED pattern that is a
//     prefix of r.Name. If there are none, the answer is
//     AllowEveryoneIfNoACLFound.
//   - An entry matches if its principal is principal or "User:*" (which
//     Kafka lets match principals of every type), its host is host or "*",
//     and its operation is op or ALL.
//   - A matching DENY refuses. Otherwise a matching ALLOW grants, where
//     DESCRIBE is also granted by an ALLOW of READ, WRITE, DELETE or ALTER,
//     and DESCRIBE_CONFIGS by an ALLOW of ALTER_CONFIGS (Kafka's
//     AclOperation documents these implications). Denies imply nothing.
func (a *Authorizer) Authorize(principal, host string, op kmsg.ACLOperation, r Resource) bool {
	if a.isSuperUser(principal) {
		return true
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	sets := a.matchingACLs(r)
	if len(sets) == 0 {
		return a.allowEveryone
	}
	if matchingEntryExists(sets, principal, host, op, kmsg.ACLPermissionTypeDeny) {
		return false
	}
	for _, allowOp := range impliedBy(op) {
		if matchingEntryExists(sets, principal, host, allowOp, kmsg.ACLPermissionTypeAllow) {
			return true
		}
	}
	return false
}

// impliedBy lists the operations whose ALLOW grants op
// (AclAuthorizer.authorizeAction's allowOps).
func impliedBy(op kmsg.ACLOperation) []kmsg.ACLOperation {
	switch op {
	case kmsg.ACLOperationDescribe:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe, kmsg.ACLOperationRead,
			kmsg.ACLOperationWrite, kmsg.ACLOperationDelete, kmsg.ACLOperationAlter}
	case kmsg.ACLOperationDescribeConfigs:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	}
	return []kmsg.ACLOperation{op}
}

// matchingACLs is AclAuthorizer.matchingAcls: the non-empty entry sets of
// the patterns that apply to r. Caller holds a.mu.
func (a *Authorizer) matchingACLs(r Resource) [][]Entry {
	var sets [][]Entry
	add := func(p ResourcePattern) {
		if es := a.acls[p]; len(es) > 0 {
			sets = append(sets, es)
		}
	}
	lit, pre := kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed
	add(ResourcePattern{Type: r.Type, Name: WildcardResource, PatternType: lit})
	if r.Name != WildcardResource {
		add(ResourcePattern{Type: r.Type, Name: r.Name, PatternType: lit})
	}
	// Kafka scans its sorted cache between the first character of the name
	// and the name; that range holds every non-empty prefix, and the empty
	// prefix only when the name itself is empty.
	if r.Name == "" {
		add(ResourcePattern{Type: r.Type, Name: "", PatternType: pre})
	}
	for i := 1; i <= len(r.Name); i++ {
		add(ResourcePattern{Type: r.Type, Name: r.Name[:i], PatternType: pre})
	}
	return sets
}

// matchingEntryExists is AclAuthorizer.matchingAclExists.
func matchingEntryExists(sets [][]Entry, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) bool {
	for _, es := range sets {
		for _, e := range es {
			if e.Permission == perm &&
				(e.Principal == principal || e.Principal == WildcardPrincipal) &&
				(e.Operation == op || e.Operation == kmsg.ACLOperationAll) &&
				(e.Host == host || e.Host == WildcardHost) {
				return true
			}
		}
	}
	return false
}

// SupportedOperations lists the operations Kafka reports in the
// authorized-operations fields for a resource type (AclEntry.
// supportedOperations), in code order; nil for types that are not concrete.
func SupportedOperations(t kmsg.ACLResourceType) []kmsg.ACLOperation {
	switch t {
	case kmsg.ACLResourceTypeTopic:
		return []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate,
			kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
			kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs}
	case kmsg.ACLResourceTypeGroup:
		return []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDelete, kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeCluster:
		return []kmsg.ACLOperation{kmsg.ACLOperationCreate, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe,
			kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs,
			kmsg.ACLOperationIdempotentWrite}
	case kmsg.ACLResourceTypeTransactionalId:
		return []kmsg.ACLOperation{kmsg.ACLOperationWrite, kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeDelegationToken:
		return []kmsg.ACLOperation{kmsg.ACLOperationDescribe}
	case kmsg.ACLResourceTypeUser:
		return []kmsg.ACLOperation{kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens}
	}
	return nil
}

// AuthorizedOperations is the bit field of the Metadata, DescribeGroups and
// DescribeCluster "authorized operations" fields (AuthHelper.
// authorizedOperations with Utils.to32BitField): bit n is set when
// Authorize allows the operation with code n. candidates nil means
// SupportedOperations(r.Type), which is what Kafka asks about; codes outside
// 0..31 have no bit and are skipped.
func (a *Authorizer) AuthorizedOperations(principal, host string, r Resource, candidates []kmsg.ACLOperation) int32 {
	if candidates == nil {
		candidates = SupportedOperations(r.Type)
	}
	var bits uint32
	for _, op := range candidates {
		if op < 0 || op > 31 {
			continue
		}
		if a.Authorize(principal, host, op, r) {
			bits |= 1 << uint(op)
		}
	}
	return int32(bits)
}
