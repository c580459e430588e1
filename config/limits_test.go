package config

import (
	"errors"
	"testing"
)

func TestRequestLimitDefaults(t *testing.T) {
	c, _ := mustLoad(t, "")
	want := max(MachineMemory()/DefaultQueuedMaxRequestBytesShare, minQueuedMaxRequestBytes)
	if c.QueuedMaxRequestBytes != want {
		t.Errorf("queued.max.request.bytes = %d, want %d (an eighth of %d)", c.QueuedMaxRequestBytes, want, MachineMemory())
	}
	if c.QueuedMaxRequests != 500 || c.MaxConnections != 1<<31-1 || c.MaxConnectionsPerIP != 1<<31-1 ||
		c.MaxConnectionCreationRate != 1<<31-1 || len(c.MaxConnectionsPerIPOverrides) != 0 {
		t.Errorf("defaults: %d requests, %d connections, %d per ip, %d/s, overrides %v",
			c.QueuedMaxRequests, c.MaxConnections, c.MaxConnectionsPerIP, c.MaxConnectionCreationRate, c.MaxConnectionsPerIPOverrides)
	}
}

func TestRequestLimitsSet(t *testing.T) {
	c, _ := mustLoad(t, "queued.max.request.bytes=-1\nmax.connections=10\nmax.connections.per.ip=0\n"+
		"max.connections.per.ip.overrides=127.0.0.2:5, [::1]:7,host.example:3\n")
	if c.QueuedMaxRequestBytes != 0 {
		t.Errorf("queued.max.request.bytes=-1 gave %d, want 0 (unlimited)", c.QueuedMaxRequestBytes)
	}
	want := map[string]int32{"127.0.0.2": 5, "::1": 7, "host.example": 3}
	if len(c.MaxConnectionsPerIPOverrides) != len(want) {
		t.Fatalf("overrides %v, want %v", c.MaxConnectionsPerIPOverrides, want)
	}
	for k, v := range want {
		if c.MaxConnectionsPerIPOverrides[k] != v {
			t.Errorf("override %s = %d, want %d", k, c.MaxConnectionsPerIPOverrides[k], v)
		}
	}
	c, _ = mustLoad(t, "queued.max.request.bytes=1048576\n")
	if c.QueuedMaxRequestBytes != 1<<20 {
		t.Errorf("queued.max.request.bytes = %d", c.QueuedMaxRequestBytes)
	}
}

func TestRequestLimitsBad(t *testing.T) {
	for _, props := range []string{
		"max.connections.per.ip.overrides=127.0.0.1\n",
		"max.connections.per.ip.overrides=127.0.0.1:x\n",
		"max.connections.per.ip.overrides=:4\n",
		"max.connections.per.ip=0\n",
		"max.connections=-1\n",
		"queued.max.requests=0\n",
	} {
		_, _, err := Load(writeProps(t, props), nil)
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Errorf("%q: %v, want a ValueError", props, err)
		}
	}
}
