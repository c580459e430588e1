package kafkazk

import (
	"errors"
	"testing"

	"github.com/kbroker/kbroker/zkstore/zktest"
)

func testRegistration(host string) BrokerZNode {
	return BrokerZNode{
		Version:   5,
		Endpoints: []Endpoint{{Listener: "PLAINTEXT", Host: host, Port: 9092, SecurityProtocol: "PLAINTEXT"}},
		JmxPort:   -1,
		Timestamp: 1732000000000,
		Features:  map[string]FeatureRange{"metadata.version": {1, 21}},
	}
}

func TestCreateTopLevelPaths(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c := h.Connect(t)
		for i := 0; i < 2; i++ { // idempotent
			if err := CreateTopLevelPaths(c); err != nil {
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
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		id, err := EnsureClusterID(a, func() string { return "gL9yRMv7SXKk6n0TQ4a8Pw" })
		if err != nil || id != "gL9yRMv7SXKk6n0TQ4a8Pw" {
			t.Fatalf("first: %q %v", id, err)
		}
		d, _, _ := a.Get(clusterIDPath)
		if string(d) != `{"version":"1","id":"gL9yRMv7SXKk6n0TQ4a8Pw"}` {
			t.Fatalf("/cluster/id = %s", d)
		}
		id, err = EnsureClusterID(b, func() string { t.Fatal("generated an id for an existing cluster"); return "" })
		if err != nil || id != "gL9yRMv7SXKk6n0TQ4a8Pw" {
			t.Fatalf("second: %q %v", id, err)
		}
	})
	if id := NewClusterID(); len(id) != 22 || id == NewClusterID() {
		t.Errorf("cluster id %q", id)
	}
}

func TestRegisterBroker(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		if err := CreateTopLevelPaths(a); err != nil {
			t.Fatal(err)
		}
		reg := testRegistration("kb1")
		epoch, err := RegisterBroker(a, 1, reg)
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
		if again, err := RegisterBroker(a, 1, reg); err != nil || again != epoch {
			t.Errorf("re-register in same session: %d %v", again, err)
		}
		// Another live broker with the same id.
		_, err = RegisterBroker(b, 1, testRegistration("kb2"))
		var taken *BrokerRegisteredError
		if !errors.As(err, &taken) || err.Error() != "broker id 1 is already registered" {
			t.Fatalf("duplicate id: %v", err)
		}
		// Once the first broker's session is gone the id is free, with a
		// newer broker epoch.
		a.Close()
		epoch2, err := RegisterBroker(b, 1, testRegistration("kb2"))
		if err != nil || epoch2 <= epoch {
			t.Fatalf("after first broker left: %d %v", epoch2, err)
		}
	})
}
