package config

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultQueuedMaxRequestBytesShare is the share of the machine's memory
// that request buffers may hold when queued.max.request.bytes is unset.
// Kafka leaves the pool unlimited, so a few clients that declare large
// frames can take a broker's whole heap. An eighth leaves most of the
// memory to the page cache, which serves consumers, and to the rest of the
// broker, while still admitting dozens of maximum-size requests at once.
const DefaultQueuedMaxRequestBytesShare = 8

// minQueuedMaxRequestBytes keeps the derived pool large enough for a
// couple of requests of Kafka's default socket.request.max.bytes on a
// small machine or container.
const minQueuedMaxRequestBytes = 256 << 20

// deriveRequestLimits resolves queued.max.request.bytes and parses
// max.connections.per.ip.overrides.
func (c *Config) deriveRequestLimits() error {
	switch v := c.values["queued.max.request.bytes"]; {
	case v == "":
		c.QueuedMaxRequestBytes = max(MachineMemory()/DefaultQueuedMaxRequestBytesShare, minQueuedMaxRequestBytes)
	default:
		n, _ := strconv.ParseInt(v, 10, 64)
		if n <= 0 {
			// Kafka: any value <= 0 disables the pool.
			n = 0
		}
		c.QueuedMaxRequestBytes = n
	}
	overrides, err := parseConnectionOverrides(c.values["max.connections.per.ip.overrides"])
	if err != nil {
		return &ValueError{Key: "max.connections.per.ip.overrides", Value: c.values["max.connections.per.ip.overrides"], Reason: err.Error()}
	}
	c.MaxConnectionsPerIPOverrides = overrides
	if c.MaxConnectionsPerIP == 0 && len(overrides) == 0 {
		// Kafka's rule: 0 per ip only makes sense with overrides.
		return &ValueError{Key: "max.connections.per.ip", Value: "0", Reason: "0 needs max.connections.per.ip.overrides"}
	}
	return nil
}

// parseConnectionOverrides parses "host:count,host:count". An IPv6 host is
// written in brackets, as in listeners.
func parseConnectionOverrides(v string) (map[string]int32, error) {
	out := map[string]int32{}
	for _, e := range parseList(v) {
		i := strings.LastIndex(e, ":")
		if i <= 0 {
			return nil, errBadOverride(e)
		}
		host := strings.Trim(strings.TrimSpace(e[:i]), "[]")
		n, err := strconv.ParseInt(strings.TrimSpace(e[i+1:]), 10, 32)
		if err != nil || n < 0 || host == "" {
			return nil, errBadOverride(e)
		}
		out[host] = int32(n)
	}
	return out, nil
}

type errBadOverride string

func (e errBadOverride) Error() string {
	return "entry " + strconv.Quote(string(e)) + " is not host:count"
}

// MachineMemory is the memory this process may use: the cgroup's limit
// when one is set, else the machine's total, else 4 GiB when neither can
// be read.
func MachineMemory() int64 {
	total := memTotal()
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			return n
		}
	}
	if total == 0 {
		return 4 << 30
	}
	return total
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
