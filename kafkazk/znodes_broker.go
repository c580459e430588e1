package kafkazk

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	Listener         string // listener name, e.g. PLAINTEXT, INTERNAL
	Host             string
	Port             int32
	SecurityProtocol string // PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
}

// connectionString is Kafka's EndPoint.connectionString: brackets around
// IPv6 hosts.
func (e Endpoint) connectionString() string {
	return e.Listener + "://" + net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// FeatureRange is a supported feature's version range.
type FeatureRange struct{ Min, Max int16 }

// BrokerZNode is /brokers/ids/<id>.
type BrokerZNode struct {
	// Version 5 (IBP >= 2.7-IV0, with features) or 4.
	Version   int
	Endpoints []Endpoint
	JmxPort   int32
	Timestamp int64  // ms; written as a decimal string
	Rack      string // "" = broker.rack unset, key omitted
	Features  map[string]FeatureRange
}

// ListenerEndpoint is the registration's endpoint for the listener.
func (r BrokerZNode) ListenerEndpoint(listener string) (Endpoint, bool) {
	for _, e := range r.Endpoints {
		if e.Listener == listener {
			return e, true
		}
	}
	return Endpoint{}, false
}

func (b BrokerZNode) encode() []byte {
	v := b.Version
	if v == 0 {
		v = 5
	}
	var o jsonObject
	if v >= 5 {
		o.add("features", encodeFeatureRanges(b.Features))
	}
	protocols := jsonObject{}
	seen := map[string]bool{}
	endpoints := make([]string, 0, len(b.Endpoints))
	for _, e := range b.Endpoints {
		endpoints = append(endpoints, e.connectionString())
		if !seen[e.Listener] {
			seen[e.Listener] = true
			protocols.add(e.Listener, e.SecurityProtocol)
		}
	}
	o.add("listener_security_protocol_map", protocols)
	o.add("endpoints", endpoints)
	if b.Rack != "" {
		o.add("rack", b.Rack)
	}
	o.add("jmx_port", b.JmxPort)
	// host/port are for pre-0.10 clients: the first PLAINTEXT endpoint,
	// null/-1 without one.
	var host any
	port := int32(-1)
	for _, e := range b.Endpoints {
		if e.SecurityProtocol == "PLAINTEXT" {
			host, port = e.Host, e.Port
			break
		}
	}
	o.add("host", host)
	o.add("timestamp", strconv.FormatInt(b.Timestamp, 10))
	o.add("port", port)
	o.add("version", v)
	return mustMarshal(o)
}

func encodeFeatureRanges(fs map[string]FeatureRange) jsonObject {
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	o := jsonObject{}
	for _, n := range names {
		o.add(n, jsonObject{{"min_version", fs[n].Min}, {"max_version", fs[n].Max}})
	}
	return o
}

// defaultSecurityProtocols is what readers assume when a registration has
// no listener_security_protocol_map: each protocol's own name.
var defaultSecurityProtocols = map[string]string{
	"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL",
}

// DecodeBrokerZNode reads /brokers/ids/<id>.
func DecodeBrokerZNode(b []byte) (BrokerZNode, error) {
	var r BrokerZNode
	f, err := parseFields("broker registration", b)
	if err != nil {
		return r, err
	}
	var conns []string
	protocols := map[string]string{}
	var features map[string]struct {
		Min int16 `json:"min_version"`
		Max int16 `json:"max_version"`
	}
	if err := f.get("version", &r.Version, true); err != nil {
		return r, fmt.Errorf("broker registration: %w", err)
	}
	for _, e := range []error{
		f.get("jmx_port", &r.JmxPort, true),
		f.get("endpoints", &conns, r.Version >= 2),
		f.get("listener_security_protocol_map", &protocols, false),
		f.get("rack", &r.Rack, false),
		f.get("features", &features, false),
		f.getStringInt64("timestamp", &r.Timestamp, false),
	} {
		if e != nil {
			return r, fmt.Errorf("broker registration: %w", e)
		}
	}
	if len(protocols) == 0 {
		protocols = defaultSecurityProtocols
	}
	for _, c := range conns {
		e, err := parseEndpoint(c, protocols)
		if err != nil {
			return r, fmt.Errorf("broker registration: %w", err)
		}
		r.Endpoints = append(r.Endpoints, e)
	}
	if len(features) > 0 {
		r.Features = make(map[string]FeatureRange, len(features))
		for n, v := range features {
			r.Features[n] = FeatureRange{v.Min, v.Max}
		}
	}
	return r, nil
}

func parseEndpoint(s string, protocols map[string]string) (Endpoint, error) {
	name, hostPort, ok := strings.Cut(s, "://")
	if !ok || name == "" {
		return Endpoint{}, fmt.Errorf("endpoint %q: want LISTENER://host:port", s)
	}
	host, portStr, err := net.SplitHostPort(hostPort)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: %w", s, err)
	}
	port, err := strconv.ParseInt(portStr, 10, 32)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: bad port", s)
	}
	proto, ok := protocols[name]
	if !ok {
		return Endpoint{}, fmt.Errorf("endpoint %q: no security protocol for listener %s", s, name)
	}
	return Endpoint{Listener: name, Host: host, Port: int32(port), SecurityProtocol: proto}, nil
}

// configZNode is /config/<type>/<name>: string-valued overrides.
func encodeConfigZNode(config map[string]string) []byte {
	return mustMarshal(jsonObject{{"version", 1}, {"config", sortedStrings(config)}})
}

// DecodeConfigZNode reads an entity's config overrides. An empty znode
// has none: Kafka creates the parents of a nested entity
// (/config/users/<u> of /config/users/<u>/clients/<c>) without data and
// reads them as empty (KafkaZkClient.getEntityConfigs).
func DecodeConfigZNode(b []byte) (map[string]string, error) {
	if len(b) == 0 {
		return map[string]string{}, nil
	}
	f, err := parseFields("config znode", b)
	if err != nil {
		return nil, err
	}
	config := map[string]string{}
	if err := f.get("config", &config, true); err != nil {
		return nil, fmt.Errorf("config znode: %w", err)
	}
	return config, nil
}

// /config/changes/config_change_*: entity path such as "topics/orders".
func EncodeConfigChange(entityPath string) []byte {
	return mustMarshal(jsonObject{{"version", 2}, {"entity_path", entityPath}})
}

// DecodeConfigChange reads a config change notification's entity path.
func DecodeConfigChange(b []byte) (string, error) {
	f, err := parseFields("config change", b)
	if err != nil {
		return "", err
	}
	var p string
	if err := f.get("entity_path", &p, true); err != nil {
		return "", fmt.Errorf("config change: %w", err)
	}
	return p, nil
}

// /cluster/id: {"version":"1","id":...}, the version a string.
func encodeClusterID(id string) []byte {
	return mustMarshal(jsonObject{{"version", "1"}, {"id", id}})
}

func decodeClusterID(b []byte) (string, error) {
	f, err := parseFields("/cluster/id", b)
	if err != nil {
		return "", err
	}
	var id string
	if err := f.get("id", &id, true); err != nil {
		return "", fmt.Errorf("/cluster/id: %w", err)
	}
	return id, nil
}

// featureZNode is /feature: the cluster's finalized features.
type featureZNode struct {
	// Version 2 (IBP >= 3.3-IV0) stores only max levels; 1 stores both.
	Version int
	Enabled bool // status 1, else 0 (feature versioning disabled, IBP < 2.7)
	// Finalized levels: Min used only by version 1.
	Features map[string]FeatureRange
}

func (f featureZNode) encode() []byte {
	v := f.Version
	if v == 0 {
		v = 2
	}
	names := make([]string, 0, len(f.Features))
	for n := range f.Features {
		names = append(names, n)
	}
	sort.Strings(names)
	fs := jsonObject{}
	for _, n := range names {
		r := f.Features[n]
		if v >= 2 {
			fs.add(n, jsonObject{{"max_version_level", r.Max}})
		} else {
			fs.add(n, jsonObject{{"min_version_level", r.Min}, {"max_version_level", r.Max}})
		}
	}
	status := 0
	if f.Enabled {
		status = 1
	}
	return mustMarshal(jsonObject{{"features", fs}, {"version", v}, {"status", status}})
}

func decodeFeatureZNode(b []byte) (featureZNode, error) {
	var z featureZNode
	f, err := parseFields("/feature", b)
	if err != nil {
		return z, err
	}
	var status int
	var fs map[string]struct {
		Min *int16 `json:"min_version_level"`
		Max int16  `json:"max_version_level"`
	}
	for _, e := range []error{
		f.get("version", &z.Version, true),
		f.get("status", &status, true),
		f.get("features", &fs, true),
	} {
		if e != nil {
			return z, fmt.Errorf("/feature: %w", e)
		}
	}
	if status != 0 && status != 1 {
		return z, fmt.Errorf("/feature: unknown status %d", status)
	}
	z.Enabled = status == 1
	z.Features = make(map[string]FeatureRange, len(fs))
	for n, r := range fs {
		fr := FeatureRange{Max: r.Max}
		if r.Min != nil {
			fr.Min = *r.Min
		}
		z.Features[n] = fr
	}
	return z, nil
}

// ProducerIDBlockZNode is /latest_producer_id_block; the bounds are
// written as decimal strings.
type ProducerIDBlockZNode struct {
	Broker     int32
	BlockStart int64
	BlockEnd   int64 // inclusive
}

func (p ProducerIDBlockZNode) Encode() []byte {
	return mustMarshal(jsonObject{
		{"version", 1},
		{"broker", p.Broker},
		{"block_start", strconv.FormatInt(p.BlockStart, 10)},
		{"block_end", strconv.FormatInt(p.BlockEnd, 10)},
	})
}

// DecodeProducerIDBlockZNode reads /latest_producer_id_block.
func DecodeProducerIDBlockZNode(b []byte) (ProducerIDBlockZNode, error) {
	var p ProducerIDBlockZNode
	f, err := parseFields("/latest_producer_id_block", b)
	if err != nil {
		return p, err
	}
	for _, e := range []error{
		f.get("broker", &p.Broker, true),
		f.getStringInt64("block_start", &p.BlockStart, true),
		f.getStringInt64("block_end", &p.BlockEnd, true),
	} {
		if e != nil {
			return p, fmt.Errorf("/latest_producer_id_block: %w", e)
		}
	}
	return p, nil
}

// ProducerIDBlockSize is Kafka's block size for /latest_producer_id_block.
const ProducerIDBlockSize = 1000
