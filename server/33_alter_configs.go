package server

// AlterConfigs, versions 0-2.
//
// The legacy API replaces a topic's overrides as a whole: configs left out
// of the request go back to the broker default. BROKER resources get
// Kafka's answer for configs that cannot change at runtime, because
// kbroker has no dynamic broker configs (GAPS.md); an empty change set is
// accepted, as Kafka accepts it.

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AlterConfigs.Int16(), 0, 2, handleAlterConfigs) }

func handleAlterConfigs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	resp := kmsg.NewPtrAlterConfigsResponse()
	resp.SetVersion(req.Version)
	count := map[configResourceKey]int{}
	for _, rr := range r.Resources {
		count[configResourceKey{rr.ResourceType, rr.ResourceName}]++
	}
	for _, rr := range r.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if err := b.alterConfigsPreprocess(rr, count[configResourceKey{rr.ResourceType, rr.ResourceName}] > 1); err != nil {
			sr.ErrorCode, sr.ErrorMessage = adminError(err, rr.ResourceName)
		} else if code, _, denied := b.configResourceDenied(req, kmsg.ACLOperationAlterConfigs, rr.ResourceType, rr.ResourceName); denied {
			// Kafka's configsAuthorizationApiError carries no message.
			sr.ErrorCode = code
		} else if err := b.alterConfigs(rr, r.ValidateOnly); err != nil {
			sr.ErrorCode, sr.ErrorMessage = adminError(err, rr.ResourceName)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Response{Msg: resp}
}

// configResourceKey names a config resource of a request.
type configResourceKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// alterConfigsPreprocess is what Kafka's ConfigAdminManager.preprocess
// refuses before any authorization: a resource named twice, a config
// named twice, a null value, and a BROKER resource (or another type)
// whose change cannot be applied: ZkAdminManager validates broker configs
// before authorizing them.
func (b *Broker) alterConfigsPreprocess(rr kmsg.AlterConfigsRequestResource, twice bool) error {
	if twice {
		return newTopicError(kerr.InvalidRequest, "Each resource must appear at most once.")
	}
	seen := map[string]bool{}
	var nulls []string
	for _, c := range rr.Configs {
		if seen[c.Name] {
			return newTopicError(kerr.InvalidRequest, "Error due to duplicate config keys")
		}
		seen[c.Name] = true
		if c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return newTopicError(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(nulls, ", "))
	}
	if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
		return b.alterConfigs(rr, true)
	}
	return nil
}

func (b *Broker) alterConfigs(rr kmsg.AlterConfigsRequestResource, validateOnly bool) error {
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		overrides := make(map[string]string, len(rr.Configs))
		for _, c := range rr.Configs {
			if c.Value == nil {
				return newTopicError(kerr.InvalidRequest, "Null value not supported for topic configs: %s", c.Name)
			}
			overrides[c.Name] = *c.Value
		}
		return b.applyTopicConfigs(rr.ResourceName, overrides, validateOnly)
	case kmsg.ConfigResourceTypeBroker:
		if err := b.alterBrokerResourceError(rr.ResourceName); err != nil {
			return err
		}
		props := make(map[string]string, len(rr.Configs))
		for _, c := range rr.Configs {
			props[c.Name] = *c.Value // nulls were refused in preprocessing
		}
		return b.alterBrokerConfigs(rr.ResourceName, props, validateOnly)
	}
	return resourceTypeError(rr.ResourceType)
}
