package clocktest

import (
	"slices"
	"testing"
	"time"
)

var t0 = time.Unix(1_700_000_000, 0)

func TestAdvanceFiresDueTimersInDeadlineOrder(t *testing.T) {
	c := NewFake(t0)
	var fired []string
	var at []time.Time
	record := func(name string) func() {
		return func() {
			fired = append(fired, name)
			at = append(at, c.Now())
		}
	}
	c.AfterFunc(3*time.Second, record("c"))
	c.AfterFunc(time.Second, record("a1"))
	c.AfterFunc(time.Second, record("a2")) // same deadline: registration order
	c.AfterFunc(2*time.Second, record("b"))
	c.AfterFunc(5*time.Second, record("late"))

	c.Advance(3 * time.Second) // a deadline equal to the new time is due
	if want := []string{"a1", "a2", "b", "c"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	wantAt := []time.Time{t0.Add(time.Second), t0.Add(time.Second), t0.Add(2 * time.Second), t0.Add(3 * time.Second)}
	if !slices.EqualFunc(at, wantAt, time.Time.Equal) {
		t.Fatalf("callbacks saw Now %v, want their deadlines %v", at, wantAt)
	}
	if got := c.Now(); !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("Now = %v after Advance, want %v", got, t0.Add(3*time.Second))
	}
	if got := c.Pending(); got != 1 {
		t.Fatalf("Pending = %d, want 1 (late)", got)
	}
}

func TestAdvanceFiresTimersScheduledByCallbacksWithinTheStep(t *testing.T) {
	c := NewFake(t0)
	var fired []string
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "first")
		c.AfterFunc(time.Second, func() { fired = append(fired, "within") })
		c.AfterFunc(5*time.Second, func() { fired = append(fired, "beyond") })
	})
	c.Advance(3 * time.Second)
	if want := []string{"first", "within"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	c.Advance(3 * time.Second)
	if want := []string{"first", "within", "beyond"}; !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	if got := c.Pending(); got != 0 {
		t.Fatalf("Pending = %d, want 0", got)
	}
}

func TestStop(t *testing.T) {
	c := NewFake(t0)
	fired := 0
	stopped := c.AfterFunc(time.Second, func() { fired++ })
	kept := c.AfterFunc(time.Second, func() { fired++ })
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer = false")
	}
	if stopped.Stop() {
		t.Fatal("second Stop = true")
	}
	c.Advance(time.Second)
	if fired != 1 {
		t.Fatalf("fired %d callbacks, want 1", fired)
	}
	if kept.Stop() {
		t.Fatal("Stop of a fired timer = true")
	}
}
