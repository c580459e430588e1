package zkbroker

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kbroker/kbroker/controller/controllertest"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore/zktest"
)

// Brokers claiming producer-id blocks at the same time each get a block of
// their own: the blocks never overlap and follow one another, and the
// znode names the last claimer (Kafka's ZooKeeper-mode ProducerIdManager).
func TestClaimProducerIDBlock(t *testing.T) {
	zktest.ForEach(t, func(t *testing.T, h zktest.Harness) {
		var clock atomic.Int64
		nodes := startNodes(t, h, &controllertest.RecordingChannel{}, &clock, 1, 2, 3)
		for _, tn := range nodes {
			waitUntil(t, "connected", func() bool { _, err := tn.n.client(); return err == nil })
		}
		var mu sync.Mutex
		starts := map[int64]bool{}
		var wg sync.WaitGroup
		for _, tn := range nodes {
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start, end, err := tn.n.ClaimProducerIDBlock()
					if err != nil {
						t.Error(err)
						return
					}
					if end-start != kafkazk.ProducerIDBlockSize || start%kafkazk.ProducerIDBlockSize != 0 {
						t.Errorf("block [%d, %d)", start, end)
					}
					mu.Lock()
					if starts[start] {
						t.Errorf("block starting at %d handed out twice", start)
					}
					starts[start] = true
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		for i := int64(0); i < 12; i++ {
			if !starts[i*kafkazk.ProducerIDBlockSize] {
				t.Errorf("blocks are not consecutive: %d missing (got %v)", i*kafkazk.ProducerIDBlockSize, starts)
			}
		}
	})
}
