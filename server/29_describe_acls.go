package server

// DescribeAcls, versions 1-3.
//
// Answers from the authorizer's cache, which every broker keeps in step
// with the metadata store through change notifications (acl_store.go), as
// Kafka's AclAuthorizer does. Needs DESCRIBE on the cluster; without an
// authorizer, SECURITY_DISABLED. A filter with UNKNOWN codes cannot be
// parsed by Kafka and closes the connection.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/acl"
)

func init() { register(kmsg.DescribeACLs.Int16(), 1, 3, handleDescribeACLs) }

func handleDescribeACLs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeACLsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	resp.Resources = []kmsg.DescribeACLsResponseResource{}
	filter, rej := acl.DescribeFilter(r)
	if rej != nil {
		b.logger.Warn("closing connection: unparsable DescribeAcls", "reason", rej.Error())
		return protocol.Response{Close: true}
	}
	switch {
	case !b.authorizeCluster(req, kmsg.ACLOperationDescribe):
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, nullableString(clusterAuthorizationFailedMessage)
		return protocol.Response{Msg: resp}
	case b.authorizer == nil:
		resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, nullableString("No Authorizer is configured on the broker")
		return protocol.Response{Msg: resp}
	}
	for _, bd := range b.authorizer.Bindings(filter) {
		n := len(resp.Resources)
		if n == 0 || resp.Resources[n-1].ResourceType != bd.Pattern.Type || resp.Resources[n-1].ResourceName != bd.Pattern.Name ||
			resp.Resources[n-1].ResourcePatternType != bd.Pattern.PatternType {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName, res.ResourcePatternType = bd.Pattern.Type, bd.Pattern.Name, bd.Pattern.PatternType
			res.ACLs = []kmsg.DescribeACLsResponseResourceACL{}
			resp.Resources = append(resp.Resources, res)
			n++
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = bd.Entry.Principal, bd.Entry.Host, bd.Entry.Operation, bd.Entry.Permission
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, a)
	}
	return protocol.Response{Msg: resp}
}
