package zkbroker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/security/acl"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// ACLs written through one broker are stored where Kafka stores them, the
// writes are conditional on the znode version, and every broker hears of
// each change through the notifications, prefixed ones included.
func TestResourceACLs(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		var clock atomic.Int64
		clock.Store(1732000000000)
		nodes := startNodes(t, h, &controllertest.RecordingChannel{}, &clock, 1, 2)
		admin := h.Connect(t)
		for _, id := range []int32{1, 2} {
			waitUntil(t, "connected", func() bool { _, err := nodes[id].n.AllACLs(); return err == nil })
		}

		var mu sync.Mutex
		changed := map[acl.ResourcePattern]int{}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[2].n.WatchACLChanges(ctx, func(p acl.ResourcePattern) {
				mu.Lock()
				changed[p]++
				mu.Unlock()
			})
		}()
		defer func() { cancel(); wg.Wait() }()

		literal := acl.ResourcePattern{Type: kmsg.ACLResourceTypeTopic, Name: "orders", PatternType: kmsg.ACLResourcePatternTypeLiteral}
		prefixed := acl.ResourcePattern{Type: kmsg.ACLResourceTypeGroup, Name: "app-", PatternType: kmsg.ACLResourcePatternTypePrefixed}
		alice := acl.Entry{Principal: "User:alice", Host: "*", Operation: kmsg.ACLOperationRead, Permission: kmsg.ACLPermissionTypeAllow}
		n1 := nodes[1].n
		if err := n1.SetResourceACLs(literal, []acl.Entry{alice}, -1); err != nil {
			t.Fatal(err)
		}
		if err := n1.SetResourceACLs(literal, []acl.Entry{alice}, -1); !errors.Is(err, ErrACLVersionConflict) {
			t.Fatalf("second create: %v, want a version conflict", err)
		}
		if err := n1.SetResourceACLs(prefixed, []acl.Entry{alice}, -1); err != nil {
			t.Fatal(err)
		}
		entries, version, err := nodes[2].n.ResourceACLs(literal)
		if err != nil || len(entries) != 1 || entries[0] != alice || version != 0 {
			t.Fatalf("read back %v version %d: %v", entries, version, err)
		}
		if _, _, err := admin.Get("/kafka-acl-extended/prefixed/Group/app-"); err != nil {
			t.Errorf("prefixed znode: %v", err)
		}
		all, err := nodes[2].n.AllACLs()
		if err != nil || len(all[literal]) != 1 || len(all[prefixed]) != 1 || len(all) != 2 {
			t.Fatalf("AllACLs = %v, %v", all, err)
		}
		waitUntil(t, "both changes seen by broker 2", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return changed[literal] == 1 && changed[prefixed] == 1
		})

		if err := n1.SetResourceACLs(literal, nil, 5); !errors.Is(err, ErrACLVersionConflict) {
			t.Fatalf("delete at a stale version: %v", err)
		}
		if err := n1.SetResourceACLs(literal, nil, version); err != nil {
			t.Fatal(err)
		}
		if entries, v, err := n1.ResourceACLs(literal); err != nil || len(entries) != 0 || v != -1 {
			t.Fatalf("after delete: %v %d %v", entries, v, err)
		}
		waitUntil(t, "the deletion seen", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return changed[literal] == 2
		})
	})
}
