package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// parseListeners parses Kafka's "NAME://host:port,..." lists. An IPv6 host
// is written in brackets; names are upper-cased as Kafka's ListenerName
// normalises them, and must be unique.
func parseListeners(v string) ([]Listener, error) {
	var out []Listener
	seen := map[string]bool{}
	for _, e := range parseList(v) {
		name, hostPort, ok := strings.Cut(e, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("listener %q is not NAME://host:port", e)
		}
		host, portText, err := net.SplitHostPort(hostPort)
		if err != nil {
			return nil, fmt.Errorf("listener %q is not NAME://host:port", e)
		}
		port, err := strconv.Atoi(portText)
		if err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("listener %q has a bad port", e)
		}
		name = strings.ToUpper(name)
		if seen[name] {
			return nil, fmt.Errorf("each listener must have a different name, %s is repeated", name)
		}
		seen[name] = true
		out = append(out, Listener{Name: name, Host: host, Port: port})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no listener")
	}
	return out, nil
}

// String formats l as Kafka writes it, brackets around IPv6 hosts.
func (l Listener) String() string {
	return l.Name + "://" + net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
}

// Addr is the host:port to bind or dial.
func (l Listener) Addr() string { return net.JoinHostPort(l.Host, strconv.Itoa(l.Port)) }

func isWildcard(host string) bool {
	return host == "" || host == "0.0.0.0" || host == "::"
}

// advertise derives advertised.listeners from listeners: a bound host is
// advertised as is, an empty or wildcard one as 127.0.0.1 so that a
// single-machine broker works out of the box.
func advertise(ls []Listener) []Listener {
	out := make([]Listener, len(ls))
	for i, l := range ls {
		if isWildcard(l.Host) {
			l.Host = "127.0.0.1"
		}
		out[i] = l
	}
	return out
}

func parseProtocolMap(v string) (map[string]string, error) {
	m := map[string]string{}
	for _, e := range parseList(v) {
		name, proto, ok := strings.Cut(e, ":")
		if !ok || name == "" || proto == "" {
			return nil, fmt.Errorf("entry %q is not LISTENER_NAME:PROTOCOL", e)
		}
		m[strings.ToUpper(strings.TrimSpace(name))] = strings.ToUpper(strings.TrimSpace(proto))
	}
	return m, nil
}
