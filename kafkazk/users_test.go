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
