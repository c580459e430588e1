// Package clocktest is a test double for clock.Clock: a manual clock whose
// timers fire only when a test advances it.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/kbroker/kbroker/internal/clock"
)

// Fake is a manual clock: time moves only in Advance, which runs due
// callbacks in deadline order in the caller's goroutine.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers map[*timer]struct{}
}

var _ clock.Clock = (*Fake)(nil)

type timer struct {
	c        *Fake
	deadline time.Time
	seq      uint64
	f        func()
}

// NewFake starts a Fake at start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start, timers: make(map[*timer]struct{})}
}

// Now returns the fake time.
func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run when Advance passes now+d.
func (c *Fake) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{c: c, deadline: c.now.Add(d), seq: c.seq, f: f}
	c.timers[t] = struct{}{}
	return t
}

// Stop removes the timer.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}

// Pending is the number of timers not yet fired or stopped.
func (c *Fake) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Advance moves time forward by d, firing every timer that falls due, one at
// a time and without the clock's lock held, so callbacks may schedule more
// timers (those that fall due within d fire too). While a callback runs,
// Now is its deadline, and timers due at the same instant fire in the order
// they were registered.
func (c *Fake) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	for {
		var due []*timer
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
