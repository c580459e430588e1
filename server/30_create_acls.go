package server

// CreateAcls, versions 1-3.
//
// Each creation is checked as a ZooKeeper-mode Kafka 3.9 broker checks it
// (acl.ValidateCreations: some faults fail one creation, some the whole
// request, some make the request unparsable and close the connection);
// the valid ones are added to their resource's znode with a conditional
// write and announced to every broker. Needs ALTER on the cluster;
// without an authorizer, SECURITY_DISABLED. Kafka answers once the write
// completed, as here.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/acl"
)

func init() { register(kmsg.CreateACLs.Int16(), 1, 3, handleCreateACLs) }

func handleCreateACLs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.CreateACLsRequest)
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	bindings := make([]acl.Binding, len(r.Creations))
	for i, c := range r.Creations {
		bindings[i] = acl.CreationBinding(req.Version, c)
	}
	rejections := acl.ValidateCreations(req.Version, bindings)
	for _, rej := range rejections {
		if rej != nil && rej.Scope == acl.ScopeConnection {
			b.logger.Warn("closing connection: unparsable CreateAcls", "reason", rej.Error())
			return protocol.Response{Close: true}
		}
	}
	results := make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	all := func(code int16, msg string) protocol.Response {
		for i := range results {
			results[i] = kmsg.NewCreateACLsResponseResult()
			results[i].ErrorCode, results[i].ErrorMessage = code, nullableString(msg)
		}
		resp.Results = results
		return protocol.Response{Msg: resp}
	}
	switch {
	case !b.authorizeCluster(req, kmsg.ACLOperationAlter):
		return all(kerr.ClusterAuthorizationFailed.Code, clusterAuthorizationFailedMessage)
	case b.authorizer == nil:
		return all(kerr.SecurityDisabled.Code, "No Authorizer is configured.")
	}
	byPattern := map[acl.ResourcePattern][]int{}
	var order []acl.ResourcePattern
	for i, rej := range rejections {
		results[i] = kmsg.NewCreateACLsResponseResult()
		if rej != nil {
			results[i].ErrorCode = rej.Err.Code
			if rej.Message != "" {
				results[i].ErrorMessage = nullableString(rej.Message)
			}
			continue
		}
		p := bindings[i].Pattern
		if _, ok := byPattern[p]; !ok {
			order = append(order, p)
		}
		byPattern[p] = append(byPattern[p], i)
	}
	for _, p := range order {
		var added []acl.Entry
		for _, i := range byPattern[p] {
			added = append(added, bindings[i].Entry)
		}
		err := b.updateResourceACLs(p, func(current []acl.Entry) ([]acl.Entry, bool) {
			next := acl.MergeEntries(current, added)
			return next, len(next) != len(acl.MergeEntries(current, nil))
		})
		if err != nil {
			b.logger.Warn("storing ACLs failed", "resource", patternString(p), "err", err)
			for _, i := range byPattern[p] {
				results[i].ErrorCode, results[i].ErrorMessage = kerr.UnknownServerError.Code, nullableString("Failed to create ACL: "+err.Error())
			}
			continue
		}
		b.logger.Info("ACLs added", "resource", patternString(p), "entries", len(added))
	}
	resp.Results = results
	return protocol.Response{Msg: resp}
}
