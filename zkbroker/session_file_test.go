package zkbroker

import (
	"bytes"
	"os"
	"testing"

	"github.com/kbroker/kbroker/zkstore"
)

func TestSessionFileRoundTrip(t *testing.T) {
	f := sessionFileIn(t.TempDir())
	if _, ok, err := f.load(); ok || err != nil {
		t.Fatalf("empty dir: ok %v err %v", ok, err)
	}
	want := zkstore.SessionCredentials{ID: 0x1000a3f2b7c0001, Password: []byte{0, 1, 2, 250, 251, 252, 253, 254, 255, 9, 8, 7, 6, 5, 4, 3}}
	if err := f.save(want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: the password lets anyone act as the broker's session", st.Mode().Perm())
	}
	got, ok, err := f.load()
	if err != nil || !ok || got.ID != want.ID || !bytes.Equal(got.Password, want.Password) {
		t.Fatalf("load = %+v %v %v, want %+v", got, ok, err, want)
	}
	if err := f.remove(); err != nil {
		t.Fatal(err)
	}
	if err := f.remove(); err != nil {
		t.Fatalf("second remove: %v", err)
	}
}

func TestSessionFileRejectsGarbage(t *testing.T) {
	for name, text := range map[string]string{
		"no version":   "session.id=1\nsession.password=AA==\n",
		"new version":  "version=7\nsession.id=1\nsession.password=AA==\n",
		"bad id":       "version=0\nsession.id=x\nsession.password=AA==\n",
		"bad password": "version=0\nsession.id=1\nsession.password=***\n",
		"no equals":    "version=0\nsession.id\n",
	} {
		f := sessionFileIn(t.TempDir())
		if err := os.WriteFile(f.path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := f.load(); err == nil || ok {
			t.Errorf("%s: ok %v err %v, want an error", name, ok, err)
		}
	}
}
