package replica

import (
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/internal/clock/clocktest"
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

// heldIsrWriter holds every ISR write until release is closed, and tells
// of each one on started.
type heldIsrWriter struct {
	started chan IsrChange
	release chan struct{}
}

func (w heldIsrWriter) WriteIsr(_ string, _ int32, _ int32, c IsrChange) (int32, error) {
	w.started <- c
	<-w.release
	return c.PartitionEpoch + 1, nil
}

func (heldIsrWriter) RecordIsrChange(string, int32) {}

// One partition's ISR write waiting on a controller that stopped answering
// does not hold back another partition's check, and the waiting partition
// is not checked again until its write is done.
func TestIsrCheckOfOnePartitionDoesNotWaitForAnother(t *testing.T) {
	clock := clocktest.NewFake(time.UnixMilli(1_700_000_000_000))
	lagging := func(index int32, w heldIsrWriter) *Partition {
		p := New("t", index, [16]byte{}, logtest.New(t, logstore.DefaultConfig()), 0, Options{
			LocalID: 0, ReplicaLagTimeMax: 10 * time.Second, MinInsyncReplicas: 1, Now: clock.Now, IsrWriter: w,
		})
		if !p.BecomeLeader(LeaderAndIsr{Leader: 0, LeaderEpoch: 1, Isr: []int32{0, 1}, Replicas: []int32{0, 1}}) {
			t.Fatal("BecomeLeader not applied")
		}
		appendOne(t, p, 1)
		return p
	}
	stuck := heldIsrWriter{started: make(chan IsrChange, 2), release: make(chan struct{})}
	free := heldIsrWriter{started: make(chan IsrChange, 2), release: make(chan struct{})}
	close(free.release)
	a, b := lagging(0, stuck), lagging(1, free)
	clock.Advance(11 * time.Second)
	var running sync.WaitGroup

	a.maybeShrinkIsrAside(&running)
	select {
	case <-stuck.started:
	case <-time.After(5 * time.Second):
		t.Fatal("partition 0 proposed no shrink")
	}
	b.maybeShrinkIsrAside(&running)
	select {
	case <-free.started:
	case <-time.After(5 * time.Second):
		t.Fatal("partition 1's check waited for partition 0's write")
	}
	a.maybeShrinkIsrAside(&running)
	select {
	case c := <-stuck.started:
		t.Fatalf("partition 0 checked again while its write waited: %+v", c)
	case <-time.After(100 * time.Millisecond):
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Isr()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("partition 1's ISR %v", b.Isr())
		}
		time.Sleep(time.Millisecond)
	}
	close(stuck.release)
	for len(a.Isr()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("partition 0's ISR %v", a.Isr())
		}
		time.Sleep(time.Millisecond)
	}
	running.Wait()
}
