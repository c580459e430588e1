package zkbroker

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// Every broker learns the topic config changes, the ones present at start
// and the later ones, each once and in sequence order; other entity types
// and unreadable notifications are skipped; a session expiry re-arms the
// watch without replaying what was handled.
func TestWatchTopicConfigChanges(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		admin := h.Connect(t)
		if err := kafkazk.CreateRecursive(admin, kafkazk.ConfigChangesPath); err != nil {
			t.Fatal(err)
		}
		notify := func(entity string) {
			t.Helper()
			if _, err := admin.Create(kafkazk.ConfigChangesPath+"/"+kafkazk.ConfigChangePrefix, kafkazk.EncodeConfigChange(entity), zkstore.ModePersistentSequential); err != nil {
				t.Fatal(err)
			}
		}
		notify("topics/before")

		var clock atomic.Int64
		clock.Store(1732000000000)
		nodes := startNodes(t, h, &controllertest.RecordingChannel{}, &clock, 1, 2)
		var mu sync.Mutex
		seen := map[int32][]string{}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for id, tn := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tn.n.WatchTopicConfigChanges(ctx, func(topic string) {
					mu.Lock()
					seen[id] = append(seen[id], topic)
					mu.Unlock()
				})
			}()
		}
		defer func() {
			cancel()
			wg.Wait()
		}()
		topics := func(id int32) []string {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(seen[id])
		}

		waitUntil(t, "the notification present at start", func() bool {
			return slices.Equal(topics(1), []string{"before"}) && slices.Equal(topics(2), []string{"before"})
		})
		notify("brokers/1")
		if _, err := admin.Create(kafkazk.ConfigChangesPath+"/"+kafkazk.ConfigChangePrefix, []byte("not json"), zkstore.ModePersistentSequential); err != nil {
			t.Fatal(err)
		}
		notify("topics/orders")
		notify("topics/audit")
		want := []string{"before", "orders", "audit"}
		waitUntil(t, "later notifications on both brokers", func() bool {
			return slices.Equal(topics(1), want) && slices.Equal(topics(2), want)
		})

		if fc, ok := nodes[1].zk.(*zkstore.MemConn); ok {
			epoch := nodes[1].n.BrokerEpoch()
			fc.Expire()
			waitUntil(t, "re-registered", func() bool { return nodes[1].n.BrokerEpoch() > epoch })
			notify("topics/after-expiry")
			want = append(want, "after-expiry")
		}
		waitUntil(t, "every notification on both brokers", func() bool {
			return slices.Equal(topics(1), want) && slices.Equal(topics(2), want)
		})
		// Nothing is handled twice.
		time.Sleep(100 * time.Millisecond)
		for _, id := range []int32{1, 2} {
			if got := topics(id); !slices.Equal(got, want) {
				t.Errorf("broker %d saw %v, want %v", id, got, want)
			}
		}
	})
}
