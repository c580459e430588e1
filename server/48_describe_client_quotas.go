package server

// DescribeClientQuotas, versions 0-1.
//
// Reports the client quotas stored in the metadata store for users, client
// ids and IPs, matched as Kafka's ZkAdminManager.describeClientQuotas
// matches them: each component names an entity type and an exact name, the
// default entity, or any specified (non-default) name; strict leaves out
// entities with other types as well. kafka-configs --describe for users
// needs it. AlterClientQuotas (49_alter_client_quotas.go) writes them;
// docs/quotas.md tells how they are enforced. Needs DESCRIBE_CONFIGS on the
// cluster.

import (
	"context"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeClientQuotas.Int16(), 0, 1, handleDescribeClientQuotas) }

// Match types of a quota filter component (ClientQuotaFilterComponent).
const (
	quotaMatchExact     = 0
	quotaMatchDefault   = 1
	quotaMatchSpecified = 2
)

func handleDescribeClientQuotas(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	fail := func(e *kerr.Error, msg string) protocol.Response {
		resp.ErrorCode, resp.ErrorMessage, resp.Entries = e.Code, nullableString(msg), nil
		return protocol.Response{Msg: resp}
	}
	if !b.authorizeCluster(req, kmsg.ACLOperationDescribeConfigs) {
		return fail(kerr.ClusterAuthorizationFailed, clusterAuthorizationFailedMessage)
	}
	seen := map[string]bool{}
	for _, c := range r.Components {
		switch {
		case c.EntityType != "user" && c.EntityType != "client-id" && c.EntityType != "ip":
			return fail(kerr.InvalidRequest, "Custom entity type '"+c.EntityType+"' not supported")
		case seen[c.EntityType]:
			return fail(kerr.InvalidRequest, "Duplicate "+c.EntityType+" filter component entity type")
		case c.MatchType == quotaMatchExact && c.Match == nil:
			return fail(kerr.InvalidRequest, "Exact match must have a name")
		}
		seen[c.EntityType] = true
	}
	entities, err := b.security.QuotaEntities()
	if err != nil {
		return fail(kerr.UnknownServerError, err.Error())
	}
	for _, e := range entities {
		if !quotaEntityMatches(e, r.Components, r.Strict) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, typ := range sortedKeysOf(e.Names) {
			ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ent.Type, ent.Name = typ, e.Names[typ]
			entry.Entity = append(entry.Entity, ent)
		}
		for _, k := range sortedKeysOf(e.Quotas) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, e.Quotas[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	sort.SliceStable(resp.Entries, func(i, j int) bool { return entityKey(resp.Entries[i]) < entityKey(resp.Entries[j]) })
	return protocol.Response{Msg: resp}
}

func quotaEntityMatches(e kafkazk.QuotaEntity, components []kmsg.DescribeClientQuotasRequestComponent, strict bool) bool {
	if strict && len(e.Names) != len(components) {
		return false
	}
	for _, c := range components {
		name, ok := e.Names[c.EntityType]
		if !ok {
			return false
		}
		switch c.MatchType {
		case quotaMatchExact:
			if name == nil || *name != *c.Match {
				return false
			}
		case quotaMatchDefault:
			if name != nil {
				return false
			}
		case quotaMatchSpecified:
			if name == nil {
				return false
			}
		}
	}
	return true
}

func entityKey(e kmsg.DescribeClientQuotasResponseEntry) string {
	var b strings.Builder
	for _, ent := range e.Entity {
		b.WriteString(ent.Type + "=" + stringOr(ent.Name) + ";")
	}
	return b.String()
}
