package zktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/kbroker/kbroker/zkstore"
)

// Harness opens sessions on one ensemble, isolated from other tests.
type Harness struct {
	Name    string
	Connect func(t *testing.T) zkstore.Client
}

// zkHarnesses is the in-memory tree and the journaled local store always,
// plus a real server when KBROKER_TEST_ZK (host:port) is set; each test
// then gets its own chroot.
func zkHarnesses(t *testing.T) []Harness {
	hs := []Harness{{Name: "fake", Connect: fakeHarness(t)}, {Name: "local", Connect: localHarness(t)}}
	if addr := os.Getenv("KBROKER_TEST_ZK"); addr != "" {
		hs = append(hs, Harness{Name: "real", Connect: realHarness(t, addr)})
	}
	return hs
}

func fakeHarness(t *testing.T) func(*testing.T) zkstore.Client {
	z := zkstore.NewMem()
	return func(t *testing.T) zkstore.Client {
		c := z.Connect()
		t.Cleanup(c.Close)
		return c
	}
}

func localHarness(t *testing.T) func(*testing.T) zkstore.Client {
	s, err := zkstore.OpenLocalStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return func(t *testing.T) zkstore.Client {
		c := s.Connect()
		t.Cleanup(c.Close)
		return c
	}
}

func realHarness(t *testing.T, addr string) func(*testing.T) zkstore.Client {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	chroot := "/kbroker-test-" + hex.EncodeToString(b)
	// Leave a shared server as we found it.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := zkstore.Dial(ctx, addr, 6*time.Second, nil)
		if err != nil {
			t.Errorf("cleanup dial: %v", err)
			return
		}
		defer c.Close()
		if err := deleteRecursive(c, chroot); err != nil {
			t.Errorf("cleanup of %s: %v", chroot, err)
		}
	})
	return func(t *testing.T) zkstore.Client {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := zkstore.Dial(ctx, addr+chroot, 6*time.Second, nil)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		t.Cleanup(c.Close)
		return c
	}
}

func deleteRecursive(c zkstore.Client, path string) error {
	kids, _, err := c.Children(path)
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := deleteRecursive(c, path+"/"+k); err != nil {
			return err
		}
	}
	if err := c.Delete(path, -1); err != nil && !errors.Is(err, zkstore.ErrNoNode) {
		return err
	}
	return nil
}

// ForEach runs f as a subtest against every harness.
func ForEach(t *testing.T, f func(t *testing.T, h Harness)) {
	for _, h := range zkHarnesses(t) {
		t.Run(h.Name, func(t *testing.T) { f(t, h) })
	}
}

// AwaitEvent waits, bounded, for a watch to fire.
func AwaitEvent(t *testing.T, ch <-chan zkstore.Event) zkstore.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed without an event")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not fire within 5s")
	}
	return zkstore.Event{}
}

// NoEvent fails the test if ch delivers within wait.
func NoEvent(t *testing.T, ch <-chan zkstore.Event, wait time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected watch event %+v", ev)
		}
	case <-time.After(wait):
	}
}

// MustCreate creates path or fails the test.
func MustCreate(t *testing.T, c zkstore.Client, path string, data string, mode zkstore.CreateMode) string {
	t.Helper()
	p, err := c.Create(path, []byte(data), mode)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	return p
}
