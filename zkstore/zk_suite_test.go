package zkstore_test

import (
	"errors"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

func TestZKVersionsAndErrors(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c := h.Connect(t)
		zktest.MustCreate(t, c, "/a", "one", zkstore.ModePersistent)
		d, st, err := c.Get("/a")
		if err != nil || string(d) != "one" || st.Version != 0 {
			t.Fatalf("get: %q %+v %v", d, st, err)
		}
		if _, err := c.Create("/a", nil, zkstore.ModePersistent); !errors.Is(err, zkstore.ErrNodeExists) {
			t.Fatalf("create existing: %v", err)
		}
		if _, err := c.Create("/missing/child", nil, zkstore.ModePersistent); !errors.Is(err, zkstore.ErrNoNode) {
			t.Fatalf("create without parent: %v", err)
		}
		st, err = c.Set("/a", []byte("two"), 0)
		if err != nil || st.Version != 1 {
			t.Fatalf("set v0: %+v %v", st, err)
		}
		if _, err := c.Set("/a", []byte("three"), 0); !errors.Is(err, zkstore.ErrBadVersion) {
			t.Fatalf("set stale version: %v", err)
		}
		if st, err = c.Set("/a", []byte("any"), -1); err != nil || st.Version != 2 {
			t.Fatalf("set any version: %+v %v", st, err)
		}
		zktest.MustCreate(t, c, "/a/b", "", zkstore.ModePersistent)
		if err := c.Delete("/a", -1); !errors.Is(err, zkstore.ErrNotEmpty) {
			t.Fatalf("delete non-empty: %v", err)
		}
		if err := c.Delete("/a/b", 5); !errors.Is(err, zkstore.ErrBadVersion) {
			t.Fatalf("delete wrong version: %v", err)
		}
		if err := c.Delete("/a/b", 0); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete("/a", 2); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Get("/a"); !errors.Is(err, zkstore.ErrNoNode) {
			t.Fatalf("get deleted: %v", err)
		}
		if ok, _, err := c.Exists("/a"); ok || err != nil {
			t.Fatalf("exists deleted: %v %v", ok, err)
		}
		if _, err := c.Set("/a", nil, -1); !errors.Is(err, zkstore.ErrNoNode) {
			t.Fatalf("set missing: %v", err)
		}
	})
}

func TestZKSequentialNames(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c := h.Connect(t)
		zktest.MustCreate(t, c, "/isr_change_notification", "", zkstore.ModePersistent)
		var got []string
		for i := 0; i < 3; i++ {
			got = append(got, zktest.MustCreate(t, c, "/isr_change_notification/isr_change_", "x", zkstore.ModePersistentSequential))
		}
		want := []string{
			"/isr_change_notification/isr_change_0000000000",
			"/isr_change_notification/isr_change_0000000001",
			"/isr_change_notification/isr_change_0000000002",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("sequential names %v, want %v", got, want)
		}
		if err := c.Delete(want[2], -1); err != nil {
			t.Fatal(err)
		}
		// The counter counts creations only: a delete does not advance it
		// (the child version does move, to 4).
		if p := zktest.MustCreate(t, c, "/isr_change_notification/isr_change_", "", zkstore.ModePersistentSequential); p != "/isr_change_notification/isr_change_0000000003" {
			t.Fatalf("after delete: %s", p)
		}
		names, st, err := c.Children("/isr_change_notification")
		sort.Strings(names)
		if err != nil || len(names) != 3 || st.NumChildren != 3 || names[2] != "isr_change_0000000003" || st.Cversion != 5 {
			t.Fatalf("children %v %+v %v", names, st, err)
		}
	})
}

func TestZKEphemeralTiedToSession(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		owner, other := h.Connect(t), h.Connect(t)
		zktest.MustCreate(t, owner, "/brokers", "", zkstore.ModePersistent)
		zktest.MustCreate(t, owner, "/brokers/1", "reg", zkstore.ModeEphemeral)
		_, st, err := other.Get("/brokers/1")
		if err != nil {
			t.Fatal(err)
		}
		if st.EphemeralOwner != owner.Session().ID || st.EphemeralOwner == 0 {
			t.Fatalf("ephemeral owner %d, session %d", st.EphemeralOwner, owner.Session().ID)
		}
		if _, err := owner.Create("/brokers/1/x", nil, zkstore.ModePersistent); !errors.Is(err, zkstore.ErrNoChildrenForEphemerals) {
			t.Fatalf("child of ephemeral: %v", err)
		}
		_, _, gone, err := other.ExistsW("/brokers/1")
		if err != nil {
			t.Fatal(err)
		}
		owner.Close()
		if ev := zktest.AwaitEvent(t, gone); ev.Type != zkstore.EventNodeDeleted || ev.Path != "/brokers/1" {
			t.Fatalf("event %+v", ev)
		}
		if ok, _, _ := other.Exists("/brokers/1"); ok {
			t.Fatal("ephemeral survived its session")
		}
		if _, err := owner.Create("/brokers/2", nil, zkstore.ModePersistent); err == nil {
			t.Fatal("closed client still writes")
		}
	})
}

func TestZKWatchesFireOnce(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c, w := h.Connect(t), h.Connect(t)
		ok, _, created, err := w.ExistsW("/controller")
		if err != nil || ok {
			t.Fatalf("existsW missing: %v %v", ok, err)
		}
		zktest.MustCreate(t, c, "/controller", "1", zkstore.ModePersistent)
		if ev := zktest.AwaitEvent(t, created); ev.Type != zkstore.EventNodeCreated || ev.Path != "/controller" {
			t.Fatalf("created event %+v", ev)
		}

		_, _, changed, err := w.GetW("/controller")
		if err != nil {
			t.Fatal(err)
		}
		_, _, kids, err := w.ChildrenW("/controller")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Set("/controller", []byte("2"), -1); err != nil {
			t.Fatal(err)
		}
		if ev := zktest.AwaitEvent(t, changed); ev.Type != zkstore.EventNodeDataChanged {
			t.Fatalf("changed event %+v", ev)
		}
		// One-shot: a second change does not reach the spent watch.
		if _, err := c.Set("/controller", []byte("3"), -1); err != nil {
			t.Fatal(err)
		}
		zktest.NoEvent(t, changed, 200*time.Millisecond)
		// Data changes do not fire child watches.
		zktest.NoEvent(t, kids, 100*time.Millisecond)

		zktest.MustCreate(t, c, "/controller/x", "", zkstore.ModePersistent)
		if ev := zktest.AwaitEvent(t, kids); ev.Type != zkstore.EventNodeChildrenChanged || ev.Path != "/controller" {
			t.Fatalf("children event %+v", ev)
		}

		_, _, deleted, err := w.GetW("/controller/x")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete("/controller/x", -1); err != nil {
			t.Fatal(err)
		}
		if ev := zktest.AwaitEvent(t, deleted); ev.Type != zkstore.EventNodeDeleted || ev.Path != "/controller/x" {
			t.Fatalf("deleted event %+v", ev)
		}
		if _, _, _, err := w.GetW("/nothing"); !errors.Is(err, zkstore.ErrNoNode) {
			t.Fatalf("getW missing: %v", err)
		}
	})
}

func TestZKMultiIsAtomic(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c := h.Connect(t)
		zktest.MustCreate(t, c, "/controller_epoch", "0", zkstore.ModePersistent)
		_, err := c.Multi(
			&zkstore.OpCreate{Path: "/controller", Data: []byte("me"), Mode: zkstore.ModeEphemeral},
			&zkstore.OpSet{Path: "/controller_epoch", Data: []byte("1"), Version: 7},
		)
		var me *zkstore.MultiError
		if !errors.Is(err, zkstore.ErrBadVersion) || !errors.As(err, &me) || me.Index != 1 {
			t.Fatalf("multi with stale version: %v", err)
		}
		if ok, _, _ := c.Exists("/controller"); ok {
			t.Fatal("failed multi left its create behind")
		}
		res, err := c.Multi(
			&zkstore.OpCheck{Path: "/controller_epoch", Version: 0},
			&zkstore.OpCreate{Path: "/controller", Data: []byte("me"), Mode: zkstore.ModeEphemeral},
			&zkstore.OpSet{Path: "/controller_epoch", Data: []byte("1"), Version: 0},
		)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 3 || res[1].Path != "/controller" || res[2].Stat.Version != 1 {
			t.Fatalf("results %+v", res)
		}
		_, st, err := c.Get("/controller")
		if err != nil || st.EphemeralOwner != c.Session().ID {
			t.Fatalf("controller node %+v %v", st, err)
		}
		_, err = c.Multi(
			&zkstore.OpCheck{Path: "/controller_epoch", Version: 0},
			&zkstore.OpDelete{Path: "/controller", Version: -1},
		)
		if !errors.Is(err, zkstore.ErrBadVersion) || !errors.As(err, &me) || me.Index != 0 {
			t.Fatalf("fenced delete: %v", err)
		}
		if _, err := c.Multi(&zkstore.OpCreate{Path: "/controller", Mode: zkstore.ModePersistent}); !errors.Is(err, zkstore.ErrNodeExists) {
			t.Fatalf("multi create existing: %v", err)
		}
	})
}

func TestZKCzxidGrows(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		c := h.Connect(t)
		zktest.MustCreate(t, c, "/b1", "", zkstore.ModeEphemeral)
		_, s1, _ := c.Get("/b1")
		if err := c.Delete("/b1", -1); err != nil {
			t.Fatal(err)
		}
		zktest.MustCreate(t, c, "/b1", "", zkstore.ModeEphemeral)
		_, s2, _ := c.Get("/b1")
		if s1.Czxid <= 0 || s2.Czxid <= s1.Czxid {
			t.Fatalf("czxid %d then %d", s1.Czxid, s2.Czxid)
		}
	})
}

// Session expiry can only be forced on the fake; registration tests cover
// its consequences.
func TestFakeZKExpiry(t *testing.T) {
	z := zkstore.NewMem()
	a, b := z.Connect(), z.Connect()
	defer a.Close()
	defer b.Close()
	zktest.MustCreate(t, a, "/e", "", zkstore.ModeEphemeral)
	_, _, aw, _ := a.ChildrenW("/")
	_, _, bw, _ := b.ExistsW("/e")
	old := a.Session().ID
	z.Expire(a)
	if ev := zktest.AwaitEvent(t, aw); ev.Type != zkstore.EventNotWatching || !errors.Is(ev.Err, zkstore.ErrSessionExpired) {
		t.Fatalf("expired session's watch: %+v", ev)
	}
	if ev := zktest.AwaitEvent(t, bw); ev.Type != zkstore.EventNodeDeleted {
		t.Fatalf("other session's watch: %+v", ev)
	}
	select {
	case <-a.SessionChanged():
	default:
		t.Fatal("no session change signalled")
	}
	if s := a.Session(); s.State != zkstore.SessionConnected || s.ID == old {
		t.Fatalf("session after expiry %+v (old %d)", s, old)
	}
}
