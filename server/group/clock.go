package group

import (
	"sort"
	"sync"
	"time"
)

// Clock is the coordinator's only source of time, injected so session and
// rebalance timeouts are tested deterministically.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine (or, for FakeClock, in the
	// goroutine that advances the clock) once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not run yet; it reports whether it
	// did so.
	Stop() bool
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// FakeClock is a manual clock for tests: time moves only in Advance, which
// runs due callbacks in deadline order in the caller's goroutine.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers map[*fakeTimer]struct{}
}

type fakeTimer struct {
	c        *FakeClock
	deadline time.Time
	seq      uint64
	f        func()
}

// NewFakeClock starts a FakeClock at start.
func NewFakeClock(start time.Time) *FakeClock {
	return &FakeClock{now: start, timers: make(map[*fakeTimer]struct{})}
}

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run when Advance passes now+d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{c: c, deadline: c.now.Add(d), seq: c.seq, f: f}
	c.timers[t] = struct{}{}
	return t
}

// Stop removes the timer.
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}

// Pending is the number of timers not yet fired or stopped.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Advance moves time forward by d, firing every timer that falls due, one at
// a time and without the clock's lock held, so callbacks may schedule more
// timers (those that fall due within d fire too).
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		var due []*fakeTimer
		for t := range c.timers {
			if !t.deadline.After(target) {
				due = append(due, t)
			}
		}
		if len(due) == 0 {
			break
		}
		sort.Slice(due, func(i, j int) bool {
			if due[i].deadline.Equal(due[j].deadline) {
				return due[i].seq < due[j].seq
			}
			return due[i].deadline.Before(due[j].deadline)
		})
		t := due[0]
		delete(c.timers, t)
		if t.deadline.After(c.now) {
			c.now = t.deadline
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = target
	c.mu.Unlock()
}
