package protocol

import (
	"testing"
	"time"
)

func testQuotas(cfg ServerConfig) *connQuotas {
	q := newConnQuotas(cfg.withDefaults())
	q.fdLimit = 0
	return q
}

func TestConnQuotasMaxConnections(t *testing.T) {
	now := time.Unix(0, 0)
	q := testQuotas(ServerConfig{MaxConnections: 2, InterBrokerListener: "REPLICATION"})
	for i := 0; i < 2; i++ {
		if _, ok := q.admit("PLAINTEXT", "10.0.0.1", now); !ok {
			t.Fatalf("connection %d refused", i)
		}
	}
	if r, ok := q.admit("PLAINTEXT", "10.0.0.2", now); ok || r != rejectMaxConnections {
		t.Fatalf("third connection: %v %q, want refused by max.connections", ok, r)
	}
	if _, ok := q.admit("REPLICATION", "10.0.0.3", now); !ok {
		t.Fatal("the inter-broker listener was refused by the broker-wide limit")
	}
	q.release("10.0.0.1")
	q.release("10.0.0.3")
	if _, ok := q.admit("PLAINTEXT", "10.0.0.2", now); !ok {
		t.Fatal("refused after a connection closed")
	}
}

func TestConnQuotasPerIPWithOverrides(t *testing.T) {
	now := time.Unix(0, 0)
	q := testQuotas(ServerConfig{MaxConnectionsPerIP: 2, MaxConnectionsPerIPOverrides: map[string]int{"127.0.0.2": 1, "localhost": 3}})
	admitN := func(ip string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, ok := q.admit("PLAINTEXT", ip, now); !ok {
				t.Fatalf("%s: connection %d refused", ip, i)
			}
		}
		if r, ok := q.admit("PLAINTEXT", ip, now); ok || r != rejectPerIP {
			t.Fatalf("%s: connection %d: %v %q, want refused per ip", ip, n, ok, r)
		}
	}
	admitN("10.1.1.1", 2)
	admitN("127.0.0.2", 1)
	admitN("127.0.0.1", 3) // localhost resolves to it
}

func TestConnQuotasZeroPerIPOnlyOverrides(t *testing.T) {
	q := testQuotas(ServerConfig{MaxConnectionsPerIPOverrides: map[string]int{"10.0.0.9": 1}})
	q.perIP = 0
	if _, ok := q.admit("PLAINTEXT", "10.0.0.1", time.Unix(0, 0)); ok {
		t.Fatal("max.connections.per.ip=0 admitted an ip without an override")
	}
	if _, ok := q.admit("PLAINTEXT", "10.0.0.9", time.Unix(0, 0)); !ok {
		t.Fatal("the override was not honoured")
	}
}

func TestConnQuotasCreationRate(t *testing.T) {
	t0 := time.Unix(100, 0)
	q := testQuotas(ServerConfig{MaxConnectionCreationRate: 10, InterBrokerListener: "REPLICATION"})
	for i := 0; i < 10; i++ {
		if d := q.throttle("PLAINTEXT", t0); d != 0 {
			t.Fatalf("connection %d of the first second delayed %v", i, d)
		}
	}
	d := q.throttle("PLAINTEXT", t0)
	if d <= 0 || d > 100*time.Millisecond {
		t.Fatalf("11th connection in a second delayed %v, want (0, 100ms]", d)
	}
	if d := q.throttle("REPLICATION", t0); d != 0 {
		t.Fatalf("inter-broker listener throttled %v", d)
	}
	if d := q.throttle("PLAINTEXT", t0.Add(100*time.Millisecond)); d != 0 {
		t.Fatalf("after the delay: still %v", d)
	}
}

func TestConnQuotasFileDescriptorBudget(t *testing.T) {
	now := time.Unix(0, 0)
	q := testQuotas(ServerConfig{InterBrokerListener: "REPLICATION"})
	files := 200 // segments, ZooKeeper, the listener
	q.fdLimit = 1000
	q.fdCount = func() int { return files + q.total }
	admitted := 0
	for i := 0; i < 2000; i++ {
		if _, ok := q.admit("PLAINTEXT", "10.0.0.1", now); !ok {
			break
		}
		admitted++
	}
	// 1000 - 200 files - a reserve of 100.
	if admitted != 700 {
		t.Fatalf("admitted %d client connections, want 700", admitted)
	}
	if r, _ := q.admit("PLAINTEXT", "10.0.0.1", now); r != rejectFileLimit {
		t.Fatalf("refused for %q, want file descriptors", r)
	}
	if _, ok := q.admit("REPLICATION", "10.0.0.2", now); !ok {
		t.Fatal("the inter-broker listener got no descriptor from the reserve")
	}
}
