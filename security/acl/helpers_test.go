package acl

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Short names for the enums the tests use over and over.
const (
	topic   = kmsg.ACLResourceTypeTopic
	group   = kmsg.ACLResourceTypeGroup
	cluster = kmsg.ACLResourceTypeCluster
	txnID   = kmsg.ACLResourceTypeTransactionalId

	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed

	allow = kmsg.ACLPermissionTypeAllow
	deny  = kmsg.ACLPermissionTypeDeny

	opAll             = kmsg.ACLOperationAll
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
	opCreateTokens    = kmsg.ACLOperationCreateTokens
	opDescribeTokens  = kmsg.ACLOperationDescribeTokens
)

// concreteOps are the operations Kafka's tests iterate (validOp: not ANY,
// UNKNOWN or ALL).
var concreteOps = []kmsg.ACLOperation{
	opRead, opWrite, opCreate, opDelete, opAlter, opDescribe, opClusterAction,
	opDescribeConfigs, opAlterConfigs, opIdempotentWrite, opCreateTokens, opDescribeTokens,
}

func lit(t kmsg.ACLResourceType, name string) ResourcePattern {
	return ResourcePattern{Type: t, Name: name, PatternType: literal}
}

func pre(t kmsg.ACLResourceType, name string) ResourcePattern {
	return ResourcePattern{Type: t, Name: name, PatternType: prefixed}
}

func ent(principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) Entry {
	return Entry{Principal: principal, Host: host, Operation: op, Permission: perm}
}

func res(t kmsg.ACLResourceType, name string) Resource { return Resource{Type: t, Name: name} }

// addACLs is Kafka tests' addAcls: union into the pattern's current set.
func addACLs(a *Authorizer, p ResourcePattern, es ...Entry) {
	a.SetResourceACLs(p, MergeEntries(a.ResourceACLs(p), es))
}

// removeACLs is Kafka tests' removeAcls: no entries means all of them.
func removeACLs(a *Authorizer, p ResourcePattern, es ...Entry) {
	if len(es) == 0 {
		a.RemoveResource(p)
		return
	}
	var keep []Entry
	for _, cur := range a.ResourceACLs(p) {
		drop := false
		for _, e := range es {
			drop = drop || cur == e
		}
		if !drop {
			keep = append(keep, cur)
		}
	}
	a.SetResourceACLs(p, keep)
}

func strp(s string) *string { return &s }

// The fixtures of Kafka's AuthorizerTest / BaseAuthorizerTest.
var (
	superUsersConf = []string{"User:superuser1", " User:superuser2"}
	alice          = "User:alice"
	aliceHost      = "192.168.0.1"

	allowReadAll  = ent(WildcardPrincipal, WildcardHost, opRead, allow)
	allowWriteAll = ent(WildcardPrincipal, WildcardHost, opWrite, allow)
	denyReadAll   = ent(WildcardPrincipal, WildcardHost, opRead, deny)
)

func newTestAuthorizer() *Authorizer { return New(Config{SuperUsers: superUsersConf}) }
