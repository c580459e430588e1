package cluster

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Shapes of Kafka's znode payloads (ZkData.scala): a JSON kind per key. A
// payload must hold exactly the required keys plus any of the optional ones,
// each of its kind.
const (
	kInt       = "int"
	kString    = "string"
	kStringInt = "decimal string"
	kNullStr   = "string or null"
	kInts      = "[int]"
	kStrings   = "[string]"
	kStrStr    = "{string:string}"
	kReplicas  = "{\"<partition>\":[int]}"
	kObject    = "object"
)

type shape struct {
	required map[string]string
	optional map[string]string
}

// checkShape decodes data as one compact JSON object and compares its key
// set and value kinds with s. It returns the decoded object for value
// checks.
func checkShape(path string, data []byte, s shape) (map[string]any, error) {
	if bytes.ContainsAny(data, "\n") {
		return nil, fmt.Errorf("%s: payload spans lines (Kafka writes compact JSON): %q", path, data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("%s: %q: %w", path, data, err)
	}
	var errs []string
	for k, kind := range s.required {
		v, ok := obj[k]
		if !ok {
			errs = append(errs, "missing key "+k)
			continue
		}
		if err := checkKind(v, kind); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	for k, v := range obj {
		if _, ok := s.required[k]; ok {
			continue
		}
		kind, ok := s.optional[k]
		if !ok {
			errs = append(errs, "unexpected key "+k)
			continue
		}
		if err := checkKind(v, kind); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return obj, fmt.Errorf("%s %s: %s", path, data, strings.Join(errs, "; "))
	}
	return obj, nil
}

func checkKind(v any, kind string) error {
	bad := fmt.Errorf("want %s, got %T %v", kind, v, v)
	switch kind {
	case kInt:
		if !isInt(v) {
			return bad
		}
	case kString:
		if _, ok := v.(string); !ok {
			return bad
		}
	case kStringInt:
		s, ok := v.(string)
		if !ok {
			return bad
		}
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return bad
		}
	case kNullStr:
		if _, ok := v.(string); !ok && v != nil {
			return bad
		}
	case kInts, kStrings:
		a, ok := v.([]any)
		if !ok {
			return bad
		}
		for _, e := range a {
			if kind == kInts && !isInt(e) {
				return bad
			}
			if _, ok := e.(string); kind == kStrings && !ok {
				return bad
			}
		}
	case kStrStr:
		m, ok := v.(map[string]any)
		if !ok {
			return bad
		}
		for _, e := range m {
			if _, ok := e.(string); !ok {
				return bad
			}
		}
	case kReplicas:
		m, ok := v.(map[string]any)
		if !ok {
			return bad
		}
		for k, e := range m {
			if _, err := strconv.Atoi(k); err != nil {
				return bad
			}
			if checkKind(e, kInts) != nil {
				return bad
			}
		}
	case kObject:
		if _, ok := v.(map[string]any); !ok {
			return bad
		}
	default:
		return fmt.Errorf("unknown kind %s", kind)
	}
	return nil
}

func isInt(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

func intOf(v any) int64 {
	n, _ := v.(json.Number).Int64()
	return n
}

// Kafka 3.x payloads, as ZkData.scala encodes them.
var (
	controllerShape = shape{required: map[string]string{
		"version": kInt, "brokerid": kInt, "timestamp": kStringInt, "kraftControllerEpoch": kInt,
	}}
	// Version 5 adds features (IBP >= 2.7-IV0); version 4 has none. rack
	// only with broker.rack set, which the harness does not set.
	brokerShapeV5 = shape{required: map[string]string{
		"features": kObject, "listener_security_protocol_map": kStrStr, "endpoints": kStrings,
		"jmx_port": kInt, "host": kNullStr, "timestamp": kStringInt, "port": kInt, "version": kInt,
	}}
	brokerShapeV4 = shape{required: map[string]string{
		"listener_security_protocol_map": kStrStr, "endpoints": kStrings,
		"jmx_port": kInt, "host": kNullStr, "timestamp": kStringInt, "port": kInt, "version": kInt,
	}}
	topicShape = shape{required: map[string]string{
		"partitions": kReplicas, "topic_id": kString, "adding_replicas": kReplicas,
		"removing_replicas": kReplicas, "version": kInt,
	}}
	stateShape = shape{
		required: map[string]string{
			"controller_epoch": kInt, "leader": kInt, "version": kInt, "leader_epoch": kInt, "isr": kInts,
		},
		// Only after an unclean election (RECOVERING = 1).
		optional: map[string]string{"leader_recovery_state": kInt},
	}
	clusterIDShape = shape{required: map[string]string{"version": kString, "id": kString}}
)

// isUUIDBase64 reports whether s is a URL-safe base64 UUID without
// padding, as Kafka writes topic and cluster ids.
func isUUIDBase64(s string) bool {
	if len(s) != 22 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 16
}

// featuresShapeOK checks /brokers/ids features: {name:{"min_version":n,"max_version":n}}
// and that metadata.version is among them.
func featuresShapeOK(v any) error {
	m := v.(map[string]any)
	if _, ok := m["metadata.version"]; !ok {
		return fmt.Errorf("features lack metadata.version: %v", m)
	}
	for name, r := range m {
		rm, ok := r.(map[string]any)
		if !ok {
			return fmt.Errorf("feature %s: %v is not an object", name, r)
		}
		keys := make([]string, 0, len(rm))
		for k, e := range rm {
			keys = append(keys, k)
			if !isInt(e) {
				return fmt.Errorf("feature %s: %s = %v is not an int", name, k, e)
			}
		}
		sort.Strings(keys)
		if !slices.Equal(keys, []string{"max_version", "min_version"}) {
			return fmt.Errorf("feature %s keys %v, want max_version, min_version", name, keys)
		}
	}
	return nil
}
