package acl

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Scope says how much of a request a Rejection fails, because a ZooKeeper
// Kafka broker rejects bad ACL requests at three different places.
type Scope int8

const (
	// ScopeBinding fails one creation: its result carries Err and Message
	// and the others proceed (AclApis and AclAuthorizer.createAcls).
	ScopeBinding Scope = iota
	// ScopeRequest fails every creation of the request with Err and a null
	// message: Kafka's handler throws building the bindings and the error
	// response copies the error to every result.
	ScopeRequest
	// ScopeConnection means Kafka cannot even parse the request (the
	// request classes' validate methods throw) and closes the connection
	// without a response.
	ScopeConnection
)

// Rejection is the Kafka error a request element gets. An empty Message is
// a null error message on the wire.
type Rejection struct {
	Scope   Scope
	Err     *kerr.Error
	Message string
}

func (r *Rejection) Error() string {
	if r.Message == "" {
		return r.Err.Message
	}
	return r.Err.Message + ": " + r.Message
}

// CreationBinding converts one CreateAcls creation, keeping the wire codes
// as sent (ValidateCreations needs to tell UNKNOWN from out-of-range). A v0
// request has no pattern type field; Kafka's default for it is LITERAL.
func CreationBinding(version int16, c kmsg.CreateACLsRequestCreation) Binding {
	pt := c.ResourcePatternType
	if version == 0 {
		pt = kmsg.ACLResourcePatternTypeLiteral
	}
	return Binding{
		Pattern: ResourcePattern{Type: c.ResourceType, Name: c.ResourceName, PatternType: pt},
		Entry:   Entry{Principal: c.Principal, Host: c.Host, Operation: c.Operation, Permission: c.PermissionType},
	}
}

// ValidateCreations checks the creations of one CreateAcls request of the
// given version the way a ZooKeeper-mode Kafka 3.9 broker does, returning
// one result per creation (nil: the creation may be stored). If any
// creation fails at request or connection scope, every result is that same
// rejection, the most severe one found. Accepted bindings are returned with
// their codes as sent; they are all concrete (no UNKNOWN, ANY or MATCH).
//
// The checks, in Kafka's order:
//   - CreateAclsRequest.validate (ScopeConnection): v0 with a non-LITERAL
//     pattern type; any code equal to UNKNOWN (0).
//   - CreateAclsRequest.aclBinding (ScopeRequest): resource type ANY,
//     pattern type ANY or MATCH, operation ANY, permission ANY.
//   - AclApis.handleCreateAcls (ScopeBinding, INVALID_REQUEST): a CLUSTER
//     resource not named "kafka-cluster"; an empty resource name.
//   - AclAuthorizer.validateAclBinding (ScopeBinding, INVALID_REQUEST
//     "Failed to create ACL"): a code Kafka does not know; a name with "/".
//   - AclAuthorizer.createAcls (ScopeBinding, UNKNOWN_SERVER_ERROR): a
//     principal that is not "type:name" fails every creation of the request
//     on the same resource pattern, because Kafka parses them together.
//
// Kafka does not refuse a PREFIXED "*" pattern in ZooKeeper mode; it is a
// prefix like any other and matches names that start with "*".
func ValidateCreations(version int16, creations []Binding) []*Rejection {
	out := make([]*Rejection, len(creations))
	if r := requestRejection(version, creations); r != nil {
		for i := range out {
			out[i] = r
		}
		return out
	}
	badPrincipal := map[ResourcePattern]bool{}
	for i, b := range creations {
		out[i] = bindingRejection(b)
		if out[i] == nil && !validPrincipal(b.Entry.Principal) {
			badPrincipal[b.Pattern] = true
		}
	}
	for i, b := range creations {
		if out[i] == nil && badPrincipal[b.Pattern] {
			out[i] = &Rejection{Scope: ScopeBinding, Err: kerr.UnknownServerError}
		}
	}
	return out
}

func requestRejection(version int16, creations []Binding) *Rejection {
	for _, b := range creations {
		if version == 0 && b.Pattern.PatternType != kmsg.ACLResourcePatternTypeLiteral {
			return &Rejection{Scope: ScopeConnection, Err: kerr.UnsupportedVersion,
				Message: "Version 0 only supports literal resource pattern types"}
		}
	}
	for _, b := range creations {
		if b.Pattern.PatternType == kmsg.ACLResourcePatternTypeUnknown ||
			b.Pattern.Type == kmsg.ACLResourceTypeUnknown ||
			b.Entry.Permission == kmsg.ACLPermissionTypeUnknown ||
			b.Entry.Operation == kmsg.ACLOperationUnknown {
			return &Rejection{Scope: ScopeConnection, Err: kerr.InvalidRequest,
				Message: "CreatableAcls contain unknown elements"}
		}
	}
	for _, b := range creations {
		pt := patternTypeFromCode(b.Pattern.PatternType)
		if resourceTypeFromCode(b.Pattern.Type) == kmsg.ACLResourceTypeAny ||
			pt == kmsg.ACLResourcePatternTypeAny || pt == kmsg.ACLResourcePatternTypeMatch ||
			operationFromCode(b.Entry.Operation) == kmsg.ACLOperationAny ||
			permissionFromCode(b.Entry.Permission) == kmsg.ACLPermissionTypeAny {
			return &Rejection{Scope: ScopeRequest, Err: kerr.UnknownServerError}
		}
	}
	return nil
}

func bindingRejection(b Binding) *Rejection {
	invalid := func(msg string) *Rejection {
		return &Rejection{Scope: ScopeBinding, Err: kerr.InvalidRequest, Message: msg}
	}
	switch {
	case b.Pattern.Type == kmsg.ACLResourceTypeCluster && b.Pattern.Name != ClusterName:
		return invalid("The only valid name for the CLUSTER resource is " + ClusterName)
	case b.Pattern.Name == "":
		return invalid("Invalid empty resource name")
	case b.isUnknown(), strings.Contains(b.Pattern.Name, "/"):
		return invalid("Failed to create ACL")
	}
	return nil
}

// DescribeFilter converts a DescribeAcls request into its filter, with the
// checks of DescribeAclsRequest: a v0 filter is on LITERAL patterns (v0 has
// no pattern type field and Kafka's default is LITERAL), and any UNKNOWN (0)
// code makes the request unparsable (ScopeConnection). Out-of-range codes
// become UNKNOWN, which matches nothing.
func DescribeFilter(req *kmsg.DescribeACLsRequest) (BindingFilter, *Rejection) {
	return wireFilter(req.Version, req.ResourceType, req.ResourceName, req.ResourcePatternType,
		req.Principal, req.Host, req.Operation, req.PermissionType)
}

// DeleteFilter converts one DeleteAcls filter with DeleteAclsRequest's
// checks (the same as DescribeFilter's). Kafka refuses the whole request if
// any filter is refused.
func DeleteFilter(version int16, f kmsg.DeleteACLsRequestFilter) (BindingFilter, *Rejection) {
	return wireFilter(version, f.ResourceType, f.ResourceName, f.ResourcePatternType,
		f.Principal, f.Host, f.Operation, f.PermissionType)
}

func wireFilter(version int16, rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType,
	principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) (BindingFilter, *Rejection) {
	if version == 0 {
		// v0 has no pattern type on the wire, and kmsg may leave the field
		// zero; Kafka's default and only v0 meaning is LITERAL.
		pt = kmsg.ACLResourcePatternTypeLiteral
	}
	if pt == kmsg.ACLResourcePatternTypeUnknown || rt == kmsg.ACLResourceTypeUnknown ||
		op == kmsg.ACLOperationUnknown || perm == kmsg.ACLPermissionTypeUnknown {
		return BindingFilter{}, &Rejection{Scope: ScopeConnection, Err: kerr.InvalidRequest,
			Message: "filter contains UNKNOWN elements"}
	}
	return BindingFilter{
		Pattern: PatternFilter{Type: resourceTypeFromCode(rt), Name: cloneString(name), PatternType: patternTypeFromCode(pt)},
		Entry: EntryFilter{Principal: cloneString(principal), Host: cloneString(host),
			Operation: operationFromCode(op), Permission: permissionFromCode(perm)},
	}, nil
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
