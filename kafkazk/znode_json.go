package kafkazk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// Kafka writes znode JSON with Jackson: compact, one line, UTF-8, no HTML
// escaping, in the key order its maps happened to iterate. The order means
// nothing to readers, but we reproduce the order the reference shows so that
// payloads compare byte for byte with Kafka's (and with the reference's
// examples in tests). jsonObject keeps fields in the order they are added.

type jsonField struct {
	key string
	val any
}

type jsonObject []jsonField

func (o *jsonObject) add(key string, val any) { *o = append(*o, jsonField{key, val}) }

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalCompact(f.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalCompact(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalCompact is json.Marshal without HTML escaping: Jackson writes
// "<default>" (the default entity of /config/clients) as is, not <.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// mustMarshal encodes payloads built only from our own types, which cannot
// fail to encode.
func mustMarshal(v any) []byte {
	b, err := marshalCompact(v)
	if err != nil {
		panic(fmt.Sprintf("controller: encoding znode: %v", err))
	}
	return b
}

// ReplicaMap is a partition → replicas map written with partition numbers
// as keys in numeric order ("0","1",…,"10"), which is how Kafka's small
// maps usually come out and reads naturally in zookeeper-shell.
type ReplicaMap map[int32][]int32

func (m ReplicaMap) MarshalJSON() ([]byte, error) {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	o := make(jsonObject, 0, len(keys))
	for _, k := range keys {
		r := m[k]
		if r == nil {
			r = []int32{}
		}
		o.add(strconv.Itoa(int(k)), r)
	}
	return o.MarshalJSON()
}

func (m *ReplicaMap) UnmarshalJSON(b []byte) error {
	var raw map[string][]int32
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make(ReplicaMap, len(raw))
	for k, v := range raw {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 {
			return fmt.Errorf("partition key %q is not a partition number", k)
		}
		out[int32(p)] = v
	}
	*m = out
	return nil
}

// sortedStrings is a string map written with keys in sorted order.
func sortedStrings(m map[string]string) jsonObject {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	o := make(jsonObject, 0, len(keys))
	for _, k := range keys {
		o.add(k, m[k])
	}
	return o
}

// jsonFields decodes a JSON object into its raw fields, for lenient
// decoding: Kafka's readers require a few keys and ignore the rest.
type jsonFields map[string]json.RawMessage

func parseFields(what string, b []byte) (jsonFields, error) {
	var f jsonFields
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if f == nil {
		return nil, fmt.Errorf("%s: not a JSON object", what)
	}
	return f, nil
}

// get decodes key into dst. Missing (or null) keys are an error only if
// required.
func (f jsonFields) get(key string, dst any, required bool) error {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		if required {
			return fmt.Errorf("missing %q", key)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	return nil
}

// getStringInt64 decodes a number Kafka writes as a decimal string
// (timestamps, producer id blocks). A plain number is accepted too.
func (f jsonFields) getStringInt64(key string, dst *int64, required bool) error {
	raw, ok := f[key]
	if !ok || string(raw) == "null" {
		if required {
			return fmt.Errorf("missing %q", key)
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return json.Unmarshal(raw, dst)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	*dst = v
	return nil
}
