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

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AlterConfigs.Int16(), 0, 2, handleAlterConfigs) }

func handleAlterConfigs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AlterConfigsRequest)
	resp := kmsg.NewPtrAlterConfigsResponse()
	resp.SetVersion(req.Version)
	for _, rr := range r.Resources {
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		var err error
		if rr.ResourceType != kmsg.ConfigResourceTypeTopic {
			// Kafka's ConfigAdminManager.preprocess checks a BROKER
			// resource (and refuses other types) before any
			// authorization; nothing here is dynamic, so checking is all
			// applying would do.
			err = b.alterConfigs(rr, true)
		}
		if err != nil {
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
		if err := b.brokerResourceError(rr.ResourceName); err != nil {
			return err
		}
		if len(rr.Configs) == 0 {
			return nil
		}
		keys := make([]string, 0, len(rr.Configs))
		for _, c := range rr.Configs {
			keys = append(keys, c.Name)
		}
		return dynamicBrokerConfigError(rr.ResourceName, keys)
	}
	return resourceTypeError(rr.ResourceType)
}
