package protocol

import (
	"slices"
	"testing"
	"time"
)

func TestMemoryPoolReserveRelease(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newMemoryPool(100)
	if !p.tryReserve(60, t0) || !p.tryReserve(40, t0) {
		t.Fatal("reservations within capacity refused")
	}
	if p.tryReserve(1, t0) {
		t.Fatal("reservation beyond capacity granted")
	}
	wake := p.wakeup()
	p.release(40, t0.Add(3*time.Second))
	select {
	case <-wake:
	default:
		t.Fatal("release did not wake waiters")
	}
	used, avail, depleted := p.stats(t0.Add(3 * time.Second))
	if used != 60 || avail != 40 || depleted != 3*time.Second {
		t.Fatalf("stats = %d used, %d available, %v depleted; want 60, 40, 3s", used, avail, depleted)
	}
}

func TestMemoryPoolAdmitsOneOversizeFrameWhenEmpty(t *testing.T) {
	now := time.Unix(0, 0)
	p := newMemoryPool(100)
	if !p.tryReserve(500, now) {
		t.Fatal("an empty pool refused a frame larger than itself: such a frame could never be read")
	}
	if p.tryReserve(1, now) {
		t.Fatal("an over-full pool granted more")
	}
	p.release(500, now)
}

func TestMemoryPoolUnlimited(t *testing.T) {
	p := newMemoryPool(0)
	for i := 0; i < 10; i++ {
		if !p.tryReserve(1<<40, time.Unix(0, 0)) {
			t.Fatal("unlimited pool refused")
		}
	}
	if _, avail, _ := p.stats(time.Unix(0, 0)); avail != -1 {
		t.Fatalf("available = %d, want -1 for unlimited", avail)
	}
}

func TestMemoryPoolReleaseMoreThanReservedPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	p := newMemoryPool(10)
	p.release(1, time.Unix(0, 0))
}

func TestChooseStalled(t *testing.T) {
	grace := time.Second
	cases := []struct {
		name string
		hs   []holder
		used int64
		want []int
	}{
		{"nothing stalled, nothing waiting on each other", []holder{
			{held: 10, partial: true, stalledFor: 100 * time.Millisecond},
			{held: 10},
		}, 20, nil},
		{"every stalled holder goes, the waiting one stays", []holder{
			{held: 10, partial: true, stalledFor: 2 * time.Second},
			{held: 10, partial: true, waiting: true},
			{held: 5, stalledFor: 3 * time.Second}, // a blocked write
			{held: 0, partial: true, stalledFor: 9 * time.Second},
		}, 25, []int{0, 2}},
		{"partial frames waiting on each other: the one lacking most", []holder{
			{held: 10, partial: true, waiting: true, remaining: 50},
			{held: 10, partial: true, waiting: true, remaining: 90},
		}, 20, []int{1}},
		{"a complete frame will be released: no deadlock", []holder{
			{held: 10, partial: true, waiting: true, remaining: 50},
			{held: 10},
		}, 20, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := chooseStalled(tc.hs, tc.used, grace); !slices.Equal(got, tc.want) {
				t.Fatalf("chooseStalled = %v, want %v", got, tc.want)
			}
		})
	}
}
