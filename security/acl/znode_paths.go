package acl

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The znode layout of Kafka's ZkAclStore and ZkAclChangeStore (ZkData).
const (
	// LiteralACLRoot holds LITERAL patterns: /kafka-acl/<Type>/<name>.
	LiteralACLRoot = "/kafka-acl"
	// ExtendedACLRoot is the parent of the per-pattern-type stores.
	ExtendedACLRoot = "/kafka-acl-extended"
	// PrefixedACLRoot holds PREFIXED patterns (the store is named after
	// the lower-cased pattern type).
	PrefixedACLRoot = ExtendedACLRoot + "/prefixed"
	// LiteralChangesPath receives change notifications for LITERAL
	// patterns.
	LiteralChangesPath = "/kafka-acl-changes"
	// ExtendedChangesPath receives change notifications for the others.
	ExtendedChangesPath = "/kafka-acl-extended-changes"
	// ChangeSequencePrefix starts every change notification's name; ZooKeeper
	// appends the sequence number (acl_changes_0000000042).
	ChangeSequencePrefix = "acl_changes_"
)

// concreteResourceTypes are the types with a znode directory, in code order
// (Kafka's AclEntry.RESOURCE_TYPES: everything but UNKNOWN and ANY).
var concreteResourceTypes = []kmsg.ACLResourceType{
	kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeCluster,
	kmsg.ACLResourceTypeTransactionalId, kmsg.ACLResourceTypeDelegationToken, kmsg.ACLResourceTypeUser,
}

// InitPaths are the znodes KafkaZkClient.createAclPaths makes (if missing)
// before an AclAuthorizer starts, parents before children.
func InitPaths() []string {
	var out []string
	for _, root := range []string{LiteralACLRoot, PrefixedACLRoot} {
		out = append(out, root)
		for _, t := range concreteResourceTypes {
			out = append(out, root+"/"+ResourceTypeName(t))
		}
	}
	return append(out, LiteralChangesPath, ExtendedChangesPath)
}

// ZnodePath is the znode holding a pattern's entries (ResourceZNode.path):
// /kafka-acl/Topic/foo, /kafka-acl-extended/prefixed/Group/app-,
// /kafka-acl/Cluster/kafka-cluster. Only concrete resource types with
// LITERAL or PREFIXED patterns have one. The name is used as is, so it must
// not contain "/" (ValidateCreations refuses such names, as Kafka does).
func ZnodePath(p ResourcePattern) (string, error) {
	if !storable(p) {
		return "", fmt.Errorf("acl: pattern %v/%v cannot be stored in ZooKeeper", p.Type, p.PatternType)
	}
	root := LiteralACLRoot
	if p.PatternType == kmsg.ACLResourcePatternTypePrefixed {
		root = PrefixedACLRoot
	}
	return root + "/" + ResourceTypeName(p.Type) + "/" + p.Name, nil
}

// ParseZnodePath is the inverse of ZnodePath, for the names the broker
// finds when it lists the ACL tree. The type level is read as Kafka's
// loadAllAcls does (SecurityUtils.resourceType: "Topic" or any casing of
// "TOPIC"/"TRANSACTIONALID"); types that are not concrete are refused,
// where Kafka would load them into its cache under UNKNOWN and never match
// them.
func ParseZnodePath(path string) (ResourcePattern, error) {
	var rest string
	var pt kmsg.ACLResourcePatternType
	switch {
	case strings.HasPrefix(path, PrefixedACLRoot+"/"):
		rest, pt = path[len(PrefixedACLRoot)+1:], kmsg.ACLResourcePatternTypePrefixed
	case strings.HasPrefix(path, LiteralACLRoot+"/"):
		rest, pt = path[len(LiteralACLRoot)+1:], kmsg.ACLResourcePatternTypeLiteral
	default:
		return ResourcePattern{}, fmt.Errorf("acl: %q is not under %s or %s", path, LiteralACLRoot, PrefixedACLRoot)
	}
	typeName, name, ok := strings.Cut(rest, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return ResourcePattern{}, fmt.Errorf("acl: %q is not <root>/<ResourceType>/<name>", path)
	}
	t := ParseResourceTypeName(typeName)
	if t == kmsg.ACLResourceTypeUnknown || t == kmsg.ACLResourceTypeAny {
		return ResourcePattern{}, fmt.Errorf("acl: %q: unknown resource type %q", path, typeName)
	}
	return ResourcePattern{Type: t, Name: name, PatternType: pt}, nil
}
