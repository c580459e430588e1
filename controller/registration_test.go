package controller

import (
	"errors"
	"testing"
)

func testRegistration(host string) brokerZNode {
	return brokerZNode{
		Version:   5,
		Endpoints: []endpoint{{Listener: "PLAINTEXT", Host: host, Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		JmxPort:   -1,
		Timestamp: 1732000000000,
		Features:  map[string]featureRange{"metadata.version": {1, 21}},
	}
}

func TestCreateTopLevelPaths(t *testing.T) {
	forEachZK(t, func(t *testing.T, h zkHarness) {
		c := h.connect(t)
		for i := 0; i < 2; i++ { // idempotent
			if err := createTopLevelPaths(c); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range append(persistentZkPaths, "/brokers", "/config", "/admin") {
			d, _, err := c.Get(p)
			if err != nil || len(d) != 0 {
				t.Errorf("%s: %q %v", p, d, err)
			}
		}
	})
}

func TestEnsureClusterID(t *testing.T) {
	forEachZK(t, func(t *testing.T, h zkHarness) {
		a, b := h.connect(t), h.connect(t)
		id, err := ensureClusterID(a, func() string { return "gL9yRMv7SXKk6n0TQ4a8Pw" })
		if err != nil || id != "gL9yRMv7SXKk6n0TQ4a8Pw" {
			t.Fatalf("first: %q %v", id, err)
		}
		d, _, _ := a.Get(clusterIDPath)
		if string(d) != `{"version":"1","id":"gL9yRMv7SXKk6n0TQ4a8Pw"}` {
			t.Fatalf("/cluster/id = %s", d)
		}
		id, err = ensureClusterID(b, func() string { t.Fatal("generated an id for an existing cluster"); return "" })
		if err != nil || id != "gL9yRMv7SXKk6n0TQ4a8Pw" {
			t.Fatalf("second: %q %v", id, err)
		}
	})
	if id := newClusterID(); len(id) != 22 || id == newClusterID() {
		t.Errorf("cluster id %q", id)
	}
}

func TestRegisterBroker(t *testing.T) {
	forEachZK(t, func(t *testing.T, h zkHarness) {
		a, b := h.connect(t), h.connect(t)
		if err := createTopLevelPaths(a); err != nil {
			t.Fatal(err)
		}
		reg := testRegistration("kb1")
		epoch, err := registerBroker(a, 1, reg)
		if err != nil {
			t.Fatal(err)
		}
		d, st, err := b.Get("/brokers/ids/1")
		if err != nil {
			t.Fatal(err)
		}
		if string(d) != string(reg.encode()) {
			t.Errorf("registration %s", d)
		}
		if st.Version != 1 || st.EphemeralOwner != a.Session().ID || st.Czxid != epoch {
			t.Errorf("stat %+v, epoch %d", st, epoch)
		}
		// Same session again: the registration stands.
		if again, err := registerBroker(a, 1, reg); err != nil || again != epoch {
			t.Errorf("re-register in same session: %d %v", again, err)
		}
		// Another live broker with the same id.
		_, err = registerBroker(b, 1, testRegistration("kb2"))
		var taken *brokerRegisteredError
		if !errors.As(err, &taken) || err.Error() != "broker id 1 is already registered" {
			t.Fatalf("duplicate id: %v", err)
		}
		// Once the first broker's session is gone the id is free, with a
		// newer broker epoch.
		a.Close()
		epoch2, err := registerBroker(b, 1, testRegistration("kb2"))
		if err != nil || epoch2 <= epoch {
			t.Fatalf("after first broker left: %d %v", epoch2, err)
		}
	})
}
