package kafkazk

import (
	"errors"
	"testing"

	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// hookZK runs a hook before (or instead of) Multi, to put another broker's
// move between an election's reads and its write.
type hookZK struct {
	zkstore.Client
	beforeMulti func()
	multi       func(ops ...zkstore.Op) ([]zkstore.OpResult, error)
}

func (h *hookZK) Multi(ops ...zkstore.Op) ([]zkstore.OpResult, error) {
	if h.beforeMulti != nil {
		f := h.beforeMulti
		h.beforeMulti = nil
		f()
	}
	if h.multi != nil {
		return h.multi(ops...)
	}
	return h.Client.Multi(ops...)
}

func readEpoch(t *testing.T, c zkstore.Client) (int32, int32) {
	t.Helper()
	d, st, err := c.Get(ControllerEpochPath)
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeControllerEpoch(d)
	if err != nil {
		t.Fatal(err)
	}
	return e, st.Version
}

func TestElectController(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		st, err := ElectController(a, 1, 1732000000000)
		if err != nil {
			t.Fatal(err)
		}
		if !st.IsController || st.ControllerID != 1 || st.Epoch != 1 || st.EpochZkVersion != 1 {
			t.Fatalf("first election %+v", st)
		}
		d, cst, _ := b.Get(ControllerPath)
		if string(d) != `{"version":2,"brokerid":1,"timestamp":"1732000000000","kraftControllerEpoch":-1}` || cst.EphemeralOwner != a.Session().ID {
			t.Fatalf("/controller = %s (%+v)", d, cst)
		}
		if e, v := readEpoch(t, b); e != 1 || v != 1 {
			t.Fatalf("/controller_epoch %d at version %d", e, v)
		}
		// Again in the same session: still controller, same epoch.
		if again, err := ElectController(a, 1, 0); err != nil || again != st {
			t.Fatalf("re-elect same session: %+v %v", again, err)
		}
		// Another broker finds a controller and does not touch the epoch.
		other, err := ElectController(b, 2, 0)
		if err != nil || other.IsController || other.ControllerID != 1 {
			t.Fatalf("second broker: %+v %v", other, err)
		}
		if e, _ := readEpoch(t, b); e != 1 {
			t.Fatalf("epoch moved to %d", e)
		}
		// The controller's session ends: the next election bumps the epoch.
		a.Close()
		next, err := ElectController(b, 2, 0)
		if err != nil || !next.IsController || next.Epoch != 2 || next.EpochZkVersion != 2 {
			t.Fatalf("after controller left: %+v %v", next, err)
		}
	})
}

func TestElectControllerLosesRace(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		// b wins between a's reads and a's multi: a's create hits
		// NODEEXISTS (and its epoch version is stale too).
		hooked := &hookZK{Client: a, beforeMulti: func() {
			if st, err := ElectController(b, 2, 0); err != nil || !st.IsController {
				t.Errorf("b's election %+v %v", st, err)
			}
		}}
		st, err := ElectController(hooked, 1, 0)
		if err != nil || st.IsController || st.ControllerID != 2 {
			t.Fatalf("loser: %+v %v", st, err)
		}
		if e, _ := readEpoch(t, a); e != 1 {
			t.Fatalf("epoch %d after one win", e)
		}
	})
}

func TestElectControllerStaleEpochVersion(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		// Someone bumps /controller_epoch (a controller that came and went)
		// after a read it: the conditional set fails with BADVERSION and a
		// is not controller, even though /controller is free.
		hooked := &hookZK{Client: a, beforeMulti: func() {
			if _, err := b.Set(ControllerEpochPath, encodeControllerEpoch(5), -1); err != nil {
				t.Error(err)
			}
		}}
		st, err := ElectController(hooked, 1, 0)
		if err != nil || st.IsController || st.ControllerID != -1 {
			t.Fatalf("stale epoch version: %+v %v", st, err)
		}
		if ok, _, _ := a.Exists(ControllerPath); ok {
			t.Fatal("/controller created despite the failed epoch check")
		}
		// The next attempt succeeds on top of the bumped epoch.
		st, err = ElectController(a, 1, 0)
		if err != nil || !st.IsController || st.Epoch != 6 {
			t.Fatalf("retry: %+v %v", st, err)
		}
	})
}

// A multi that succeeded but whose answer was lost comes back as
// NODEEXISTS when retried; the election must recognise its own win.
func TestElectControllerRetriedMultiWon(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a := h.Connect(t)
		hooked := &hookZK{Client: a}
		hooked.multi = func(ops ...zkstore.Op) ([]zkstore.OpResult, error) {
			if _, err := a.Multi(ops...); err != nil {
				t.Fatal(err)
			}
			return nil, &zkstore.MultiError{Index: 0, Op: ops[0], Err: zkstore.ErrNodeExists}
		}
		st, err := ElectController(hooked, 1, 0)
		if err != nil || !st.IsController || st.Epoch != 1 || st.EpochZkVersion != 1 {
			t.Fatalf("retried win: %+v %v", st, err)
		}
	})
}

func TestControllerWritesAreFenced(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		old, err := ElectController(a, 1, 0)
		if err != nil || !old.IsController {
			t.Fatalf("%+v %v", old, err)
		}
		zktest.MustCreate(t, a, "/brokers", "", zkstore.ModePersistent)
		res, err := ControllerWrite(a, old.EpochZkVersion, &zkstore.OpCreate{Path: "/brokers/topics", Mode: zkstore.ModePersistent})
		if err != nil || len(res) != 1 || res[0].Path != "/brokers/topics" {
			t.Fatalf("fenced write by the controller: %+v %v", res, err)
		}
		// A new controller is elected (the old one lost its session but has
		// not noticed yet): the old one's writes fail.
		a.Close()
		a2 := h.Connect(t)
		if _, err := ElectController(b, 2, 0); err != nil {
			t.Fatal(err)
		}
		_, err = ControllerWrite(a2, old.EpochZkVersion, &zkstore.OpCreate{Path: "/brokers/ids", Mode: zkstore.ModePersistent})
		if !errors.Is(err, ErrControllerMoved) {
			t.Fatalf("stale controller write: %v", err)
		}
		if ok, _, _ := b.Exists("/brokers/ids"); ok {
			t.Fatal("stale controller's write applied")
		}
		// A failing op other than the check keeps its own error.
		cur, _ := ElectController(b, 2, 0)
		_, err = ControllerWrite(b, cur.EpochZkVersion, &zkstore.OpCreate{Path: "/brokers/topics", Mode: zkstore.ModePersistent})
		if !errors.Is(err, zkstore.ErrNodeExists) {
			t.Fatalf("op error: %v", err)
		}
		// Resigning is fenced too.
		if err := ResignController(a2, old.EpochZkVersion); !errors.Is(err, ErrControllerMoved) {
			t.Fatalf("stale resign: %v", err)
		}
		if err := ResignController(b, cur.EpochZkVersion); err != nil {
			t.Fatal(err)
		}
		if ok, _, _ := b.Exists(ControllerPath); ok {
			t.Fatal("/controller still there after resign")
		}
	})
}

// DeposeController deletes only the /controller of the session found dead.
func TestDeposeController(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		a, b := h.Connect(t), h.Connect(t)
		if st, err := ElectController(a, 1, 0); err != nil || !st.IsController {
			t.Fatalf("election %+v %v", st, err)
		}
		// Another broker id, or broker 1 in another session: left alone.
		for _, c := range []struct {
			id      int32
			session int64
		}{{2, a.Session().ID}, {1, b.Session().ID}} {
			if ok, err := DeposeController(b, c.id, c.session); ok || err != nil {
				t.Fatalf("DeposeController(%d, 0x%x) = %v, %v", c.id, c.session, ok, err)
			}
		}
		if ok, err := DeposeController(b, 1, a.Session().ID); !ok || err != nil {
			t.Fatalf("DeposeController of the controller's session = %v, %v", ok, err)
		}
		if id, _, err := ReadController(b); id != -1 || err != nil {
			t.Fatalf("/controller after deposing names %d (%v)", id, err)
		}
		// Nothing left to delete.
		if ok, err := DeposeController(b, 1, a.Session().ID); ok || err != nil {
			t.Fatalf("second DeposeController = %v, %v", ok, err)
		}
		next, err := ElectController(b, 2, 0)
		if err != nil || !next.IsController || next.Epoch != 2 {
			t.Fatalf("election after deposing: %+v %v", next, err)
		}
	})
}
