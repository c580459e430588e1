package kafkazk

import (
	"testing"
)

func TestSanitize(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"alice", "alice"},
		{"user-1_a.b", "user-1_a.b"},
		{"a b*", "a%20b%2A"},
		{"CN=x,O=y", "CN%3Dx%2CO%3Dy"},
		{"é", "%C3%A9"},
		{"a+b", "a%2Bb"},
	} {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back, err := Desanitize(Sanitize(tt.in)); err != nil || back != tt.in {
			t.Errorf("Desanitize(Sanitize(%q)) = %q, %v", tt.in, back, err)
		}
	}
}

func TestAlterUserConfig(t *testing.T) {
	h := newTestTree(t)
	user := "CN=alice,O=kb"
	if err := AlterUserConfig(h.admin, user, func(c map[string]string) error {
		c["SCRAM-SHA-256"] = "salt=a,stored_key=b,server_key=c,iterations=4096"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := AlterUserConfig(h.admin, user, func(c map[string]string) error { c["SCRAM-SHA-512"] = "x"; return nil }); err != nil {
		t.Fatal(err)
	}
	data, _, err := h.admin.Get("/config/users/CN%3Dalice%2CO%3Dkb")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":1,"config":{"SCRAM-SHA-256":"salt=a,stored_key=b,server_key=c,iterations=4096","SCRAM-SHA-512":"x"}}`
	if string(data) != want {
		t.Errorf("znode %s, want %s", data, want)
	}
	users, err := Users(h.admin)
	if err != nil || len(users) != 1 || users[0] != user {
		t.Errorf("Users = %q, %v", users, err)
	}
	changes, _, err := h.admin.Children(ConfigChangesPath)
	if err != nil || len(changes) != 2 {
		t.Fatalf("notifications %q, %v", changes, err)
	}
	data, _, _ = h.admin.Get(ConfigChangesPath + "/" + changes[0])
	if string(data) != `{"version":2,"entity_path":"users/CN%3Dalice%2CO%3Dkb"}` {
		t.Errorf("notification %s", data)
	}
	if err := AlterUserConfig(h.admin, user, func(c map[string]string) error { delete(c, "SCRAM-SHA-512"); return errUnknownTopic }); err != errUnknownTopic {
		t.Errorf("failed change: %v", err)
	}
	if cfg, _, _ := UserConfig(h.admin, user); len(cfg) != 2 {
		t.Errorf("a failed change was written: %v", cfg)
	}
	cfg, version, err := UserConfig(h.admin, "bob")
	if err != nil || len(cfg) != 0 || version != -1 {
		t.Errorf("absent user: %v %d %v", cfg, version, err)
	}
}

func TestQuotaEntities(t *testing.T) {
	h := newTestTree(t)
	set := func(path, data string) {
		t.Helper()
		if err := CreateRecursive(h.admin, path); err != nil {
			t.Fatal(err)
		}
		if _, err := h.admin.Set(path, []byte(data), -1); err != nil {
			t.Fatal(err)
		}
	}
	set("/config/users/alice", `{"version":1,"config":{"SCRAM-SHA-256":"x","producer_byte_rate":"1024"}}`)
	set("/config/users/bob", `{"version":1,"config":{"SCRAM-SHA-256":"x"}}`)
	set("/config/users/<default>/clients/app", `{"version":1,"config":{"consumer_byte_rate":"2.5"}}`)
	set("/config/ips/127.0.0.1", `{"version":1,"config":{"connection_creation_rate":"10"}}`)
	es, err := QuotaEntities(h.admin)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]float64{}
	for _, e := range es {
		key := ""
		for _, typ := range []string{"user", "client-id", "ip"} {
			if n, ok := e.Names[typ]; ok {
				name := "<default>"
				if n != nil {
					name = *n
				}
				key += typ + "=" + name + ";"
			}
		}
		got[key] = e.Quotas
	}
	want := map[string]map[string]float64{
		"user=alice;":                   {"producer_byte_rate": 1024},
		"user=<default>;client-id=app;": {"consumer_byte_rate": 2.5},
		"ip=127.0.0.1;":                 {"connection_creation_rate": 10},
	}
	if len(got) != len(want) {
		t.Fatalf("entities %v, want %v", got, want)
	}
	for k, v := range want {
		for q, f := range v {
			if got[k][q] != f {
				t.Errorf("%s %s = %v, want %v", k, q, got[k][q], f)
			}
		}
	}
}
