package server

// DeleteAcls, versions 1-3.
//
// Each filter deletes the bindings it matches, a binding matched by
// several filters being credited to the first (Kafka's
// AclAuthorizer.deleteAcls). The resources are found in the cache, plus
// the one a definite filter names even when the cache does not hold it
// yet, and every change is a conditional write of the resource's znode
// re-applied to what the znode holds. Needs ALTER on the cluster; without
// an authorizer, SECURITY_DISABLED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/acl"
)

func init() { register(kmsg.DeleteACLs.Int16(), 1, 3, handleDeleteACLs) }

func handleDeleteACLs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DeleteACLsRequest)
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	filters := make([]acl.BindingFilter, len(r.Filters))
	for i, f := range r.Filters {
		bf, rej := acl.DeleteFilter(req.Version, f)
		if rej != nil {
			b.logger.Warn("closing connection: unparsable DeleteAcls", "reason", rej.Error())
			return protocol.Response{Close: true}
		}
		filters[i] = bf
	}
	results := make([]kmsg.DeleteACLsResponseResult, len(filters))
	for i := range results {
		results[i] = kmsg.NewDeleteACLsResponseResult()
		results[i].MatchingACLs = []kmsg.DeleteACLsResponseResultMatchingACL{}
	}
	resp.Results = results
	all := func(code int16, msg string) protocol.Response {
		for i := range results {
			results[i].ErrorCode, results[i].ErrorMessage = code, nullableString(msg)
		}
		return protocol.Response{Msg: resp}
	}
	switch {
	case !b.authorizeCluster(req, kmsg.ACLOperationAlter):
		return all(kerr.ClusterAuthorizationFailed.Code, clusterAuthorizationFailedMessage)
	case b.authorizer == nil:
		return all(kerr.SecurityDisabled.Code, "No Authorizer is configured.")
	}
	plan := b.authorizer.Matching(filters)
	patterns := make([]acl.ResourcePattern, 0, len(plan.Updates)+len(plan.Uncached))
	for _, u := range plan.Updates {
		patterns = append(patterns, u.Pattern)
	}
	patterns = append(patterns, plan.Uncached...)
	for _, p := range patterns {
		var deleted [][]acl.Binding
		err := b.updateResourceACLs(p, func(current []acl.Entry) ([]acl.Entry, bool) {
			remaining, perFilter := acl.DeleteFromEntries(p, current, filters)
			deleted = perFilter
			return remaining, perFilter != nil
		})
		code, msg := int16(0), (*string)(nil)
		if err != nil {
			b.logger.Warn("deleting ACLs failed", "resource", patternString(p), "err", err)
			code, msg = kerr.UnknownServerError.Code, nullableString("Failed to delete ACL: "+err.Error())
			// Report what the cache said would go, each with the error.
			deleted = make([][]acl.Binding, len(filters))
			for i, bs := range plan.Deleted {
				for _, bd := range bs {
					if bd.Pattern == p {
						deleted[i] = append(deleted[i], bd)
					}
				}
			}
		}
		for i, bs := range deleted {
			for _, bd := range bs {
				m := kmsg.NewDeleteACLsResponseResultMatchingACL()
				m.ErrorCode, m.ErrorMessage = code, msg
				m.ResourceType, m.ResourceName, m.ResourcePatternType = bd.Pattern.Type, bd.Pattern.Name, bd.Pattern.PatternType
				m.Principal, m.Host, m.Operation, m.PermissionType = bd.Entry.Principal, bd.Entry.Host, bd.Entry.Operation, bd.Entry.Permission
				results[i].MatchingACLs = append(results[i].MatchingACLs, m)
			}
		}
		if err == nil && len(deleted) > 0 {
			b.logger.Info("ACLs deleted", "resource", patternString(p))
		}
	}
	return protocol.Response{Msg: resp}
}
