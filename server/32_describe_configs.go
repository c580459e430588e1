package server

// DescribeConfigs, versions 1-4.
//
// TOPIC resources list every topic config: an override as
// DYNAMIC_TOPIC_CONFIG, otherwise the broker's value as
// STATIC_BROKER_CONFIG (set in server.properties) or DEFAULT_CONFIG, with
// the broker keys as synonyms when asked. BROKER resources list the
// broker's configuration with each value's source (DYNAMIC_BROKER_CONFIG,
// DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG);
// the empty name lists the cluster-wide dynamic defaults. Other resource
// types are refused with INVALID_REQUEST.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeConfigs.Int16(), 1, 4, handleDescribeConfigs) }

func handleDescribeConfigs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeConfigsRequest)
	resp := kmsg.NewPtrDescribeConfigsResponse()
	resp.SetVersion(req.Version)
	docs := req.Version >= 3 && r.IncludeDocumentation
	for _, rr := range r.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if code, msg, denied := b.configResourceDenied(req, kmsg.ACLOperationDescribeConfigs, rr.ResourceType, rr.ResourceName); denied {
			sr.ErrorCode, sr.ErrorMessage = code, msg
			resp.Resources = append(resp.Resources, sr)
			continue
		}
		entries, err := b.describeResource(rr, r.IncludeSynonyms, docs)
		if err != nil {
			sr.ErrorCode, sr.ErrorMessage = adminError(err, rr.ResourceName)
		}
		for _, e := range entries {
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			c.Name, c.Value, c.ReadOnly, c.IsSensitive = e.Name, e.Value, e.ReadOnly, e.IsSensitive
			c.Source = e.Source
			c.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig
			c.ConfigSynonyms = e.Synonyms
			c.ConfigType = e.Type
			c.Documentation = e.Doc
			sr.Configs = append(sr.Configs, c)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Response{Msg: resp}
}

func (b *Broker) describeResource(rr kmsg.DescribeConfigsRequestResource, synonyms, docs bool) ([]describedConfig, error) {
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		if msg := topicNameProblem(rr.ResourceName); msg != "" {
			return nil, &topicError{code: kerr.InvalidTopicException.Code, msg: msg}
		}
		t := b.topic(rr.ResourceName)
		if t == nil {
			return nil, unknownTopicError(rr.ResourceName)
		}
		if rr.ConfigNames != nil && len(rr.ConfigNames) == 0 {
			return nil, nil
		}
		return b.topicConfigEntries(t.Configs, synonyms, docs, rr.ConfigNames...), nil
	case kmsg.ConfigResourceTypeBroker:
		if err := b.brokerResourceError(rr.ResourceName); err != nil {
			return nil, err
		}
		if rr.ConfigNames != nil && len(rr.ConfigNames) == 0 {
			return nil, nil
		}
		return b.brokerConfigEntries(rr.ResourceName != "", synonyms, docs, rr.ConfigNames...), nil
	}
	return nil, resourceTypeError(rr.ResourceType)
}
