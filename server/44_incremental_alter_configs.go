package server

// IncrementalAlterConfigs, versions 0-1.
//
// SET and DELETE change one topic override each; APPEND and SUBTRACT add to
// or remove from a LIST config, starting from its current value (the
// override, else the broker default) as Kafka does. The resulting override
// set is validated as a whole and stored at once, so a resource either
// changes completely or not at all. On a BROKER resource the operations
// apply to the entity's stored dynamic configs, as ZkAdminManager reads
// them from /config/brokers, and the result replaces them.

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/protocol"
)

func init() {
	register(kmsg.IncrementalAlterConfigs.Int16(), 0, 1, handleIncrementalAlterConfigs)
}

func handleIncrementalAlterConfigs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.IncrementalAlterConfigsRequest)
	resp := kmsg.NewPtrIncrementalAlterConfigsResponse()
	resp.SetVersion(req.Version)
	count := map[configResourceKey]int{}
	for _, rr := range r.Resources {
		count[configResourceKey{rr.ResourceType, rr.ResourceName}]++
	}
	for _, rr := range r.Resources {
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = rr.ResourceType, rr.ResourceName
		if err := b.incrementalPreprocess(rr, count[configResourceKey{rr.ResourceType, rr.ResourceName}] > 1); err != nil {
			sr.ErrorCode, sr.ErrorMessage = adminError(err, rr.ResourceName)
		} else if code, _, denied := b.configResourceDenied(req, kmsg.ACLOperationAlterConfigs, rr.ResourceType, rr.ResourceName); denied {
			// Kafka's configsAuthorizationApiError carries no message.
			sr.ErrorCode = code
		} else if err := b.incrementalAlterConfigs(rr, r.ValidateOnly); err != nil {
			sr.ErrorCode, sr.ErrorMessage = adminError(err, rr.ResourceName)
		}
		resp.Resources = append(resp.Resources, sr)
	}
	return protocol.Response{Msg: resp}
}

// incrementalPreprocess is what Kafka's ConfigAdminManager.preprocess
// checks before any authorization: a resource or config named twice, a
// null value, and the whole of a BROKER resource (its name and whether
// its configs may change).
func (b *Broker) incrementalPreprocess(rr kmsg.IncrementalAlterConfigsRequestResource, twice bool) error {
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
		if c.Op != kmsg.IncrementalAlterConfigOpDelete && c.Value == nil {
			nulls = append(nulls, c.Name)
		}
	}
	if len(nulls) > 0 {
		return newTopicError(kerr.InvalidRequest, "Null value not supported for : %s", strings.Join(nulls, ", "))
	}
	if rr.ResourceType == kmsg.ConfigResourceTypeBroker {
		// ZkAdminManager validates broker configs before authorizing.
		return b.incrementalAlterConfigs(rr, true)
	}
	return nil
}

func (b *Broker) incrementalAlterConfigs(rr kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	seen := map[string]bool{}
	for _, c := range rr.Configs {
		if seen[c.Name] {
			return newTopicError(kerr.InvalidRequest, "Error due to duplicate config keys")
		}
		seen[c.Name] = true
		if c.Op > kmsg.IncrementalAlterConfigOpSubtract || c.Op < kmsg.IncrementalAlterConfigOpSet {
			return newTopicError(kerr.InvalidRequest, "Unknown alter config operation type %d for config %s", int8(c.Op), c.Name)
		}
	}
	switch rr.ResourceType {
	case kmsg.ConfigResourceTypeTopic:
		t := b.topic(rr.ResourceName)
		if t == nil {
			return unknownTopicError(rr.ResourceName)
		}
		overrides, err := b.applyConfigOps(t.Configs, rr.Configs)
		if err != nil {
			return err
		}
		return b.applyTopicConfigs(rr.ResourceName, overrides, validateOnly)
	case kmsg.ConfigResourceTypeBroker:
		if err := b.alterBrokerResourceError(rr.ResourceName); err != nil {
			return err
		}
		current, err := b.storedBrokerConfigs(rr.ResourceName)
		if err != nil {
			return err
		}
		props, err := applyBrokerConfigOps(current, rr.Configs)
		if err != nil {
			return err
		}
		return b.alterBrokerConfigs(rr.ResourceName, props, validateOnly)
	}
	return resourceTypeError(rr.ResourceType)
}

// applyConfigOps returns a copy of a topic's overrides with ops applied.
func (b *Broker) applyConfigOps(current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	return applyIncrementalOps(current, ops, func(name string) (isList bool, def string, err error) {
		d, ok := config.LookupTopicConfig(name)
		if !ok {
			return false, "", &configError{config.ValidateTopicConfigs(map[string]string{name: ""})}
		}
		def, _ = b.current().TopicDefault(name)
		return d.Type == kmsg.ConfigTypeList, def, nil
	})
}

// applyIncrementalOps is ConfigAdminManager.prepareIncrementalConfigs:
// SET and DELETE by name; APPEND and SUBTRACT only on LIST configs,
// starting from the current value, else the default listType gives.
func applyIncrementalOps(current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig,
	listType func(name string) (isList bool, def string, err error)) (map[string]string, error) {
	out := make(map[string]string, len(current)+len(ops))
	for k, v := range current {
		out[k] = v
	}
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if op.Value == nil {
				return nil, newTopicError(kerr.InvalidRequest, "Null value not supported for : %s", op.Name)
			}
			out[op.Name] = *op.Value
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(out, op.Name)
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			verb := "append"
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract {
				verb = "subtract"
			}
			isList, def, err := listType(op.Name)
			if err != nil {
				return nil, err
			}
			if !isList {
				return nil, newTopicError(kerr.InvalidConfig, "Config value %s is not allowed for config key: %s", verb, op.Name)
			}
			cur, ok := out[op.Name]
			if !ok {
				cur = def
			}
			var delta []string
			if op.Value != nil {
				delta = splitList(*op.Value)
			}
			if op.Op == kmsg.IncrementalAlterConfigOpAppend {
				out[op.Name] = strings.Join(appendList(splitList(cur), delta), ",")
			} else {
				out[op.Name] = strings.Join(subtractList(splitList(cur), delta), ",")
			}
		}
	}
	return out, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func appendList(cur, add []string) []string {
	for _, a := range add {
		if !slices.Contains(cur, a) {
			cur = append(cur, a)
		}
	}
	return cur
}

func subtractList(cur, remove []string) []string {
	out := cur[:0:0]
	for _, c := range cur {
		if !slices.Contains(remove, c) {
			out = append(out, c)
		}
	}
	return out
}
