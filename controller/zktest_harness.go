package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"
	"time"
)

// zkHarness opens sessions on one ensemble, isolated from other tests.
type zkHarness struct {
	name    string
	connect func(t *testing.T) zkClient
}

// zkHarnesses is the in-memory tree and the journaled local store always,
// plus a real server when KBROKER_TEST_ZK (host:port) is set; each test
// then gets its own chroot.
func zkHarnesses(t *testing.T) []zkHarness {
	hs := []zkHarness{{name: "fake", connect: fakeHarness(t)}, {name: "local", connect: localHarness(t)}}
	if addr := os.Getenv("KBROKER_TEST_ZK"); addr != "" {
		hs = append(hs, zkHarness{name: "real", connect: realHarness(t, addr)})
	}
	return hs
}

func fakeHarness(t *testing.T) func(*testing.T) zkClient {
	z := newMemZK()
	return func(t *testing.T) zkClient {
		c := z.connect()
		t.Cleanup(c.Close)
		return c
	}
}

func localHarness(t *testing.T) func(*testing.T) zkClient {
	s, err := OpenLocalStore(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return func(t *testing.T) zkClient {
		c := s.connect()
		t.Cleanup(c.Close)
		return c
	}
}

func realHarness(t *testing.T, addr string) func(*testing.T) zkClient {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	chroot := "/kbroker-test-" + hex.EncodeToString(b)
	// Leave a shared server as we found it.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := dialZK(ctx, addr, 6*time.Second, nil)
		if err != nil {
			t.Errorf("cleanup dial: %v", err)
			return
		}
		defer c.Close()
		if err := deleteRecursive(c, chroot); err != nil {
			t.Errorf("cleanup of %s: %v", chroot, err)
		}
	})
	return func(t *testing.T) zkClient {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := dialZK(ctx, addr+chroot, 6*time.Second, nil)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		t.Cleanup(c.Close)
		return c
	}
}

func deleteRecursive(c zkClient, path string) error {
	kids, _, err := c.Children(path)
	if errors.Is(err, errNoNode) {
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
	if err := c.Delete(path, -1); err != nil && !errors.Is(err, errNoNode) {
		return err
	}
	return nil
}

// forEachZK runs f as a subtest against every harness.
func forEachZK(t *testing.T, f func(t *testing.T, h zkHarness)) {
	for _, h := range zkHarnesses(t) {
		t.Run(h.name, func(t *testing.T) { f(t, h) })
	}
}

// awaitEvent waits, bounded, for a watch to fire.
func awaitEvent(t *testing.T, ch <-chan zkEvent) zkEvent {
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
	return zkEvent{}
}

func noEvent(t *testing.T, ch <-chan zkEvent, wait time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("unexpected watch event %+v", ev)
		}
	case <-time.After(wait):
	}
}

func mustCreate(t *testing.T, c zkClient, path string, data string, mode createMode) string {
	t.Helper()
	p, err := c.Create(path, []byte(data), mode)
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	return p
}
