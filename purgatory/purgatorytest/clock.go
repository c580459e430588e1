// Package purgatorytest is a test double: a manual clock for the purgatory
// whose timers fire only when a test advances it.
package purgatorytest

import (
	"sort"
	"sync"
	"time"

	"github.com/kbroker/kbroker/purgatory"
)

// Clock is a fake purgatory.Clock. Timers due at or before the new time
// run synchronously, in deadline order, inside Advance.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

var _ purgatory.Clock = (*Clock)(nil)

// NewClock starts at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

type timer struct {
	c       *Clock
	at      time.Time
	f       func()
	stopped bool
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// Now is the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run when Advance reaches now+d.
func (c *Clock) AfterFunc(d time.Duration, f func()) purgatory.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

// Pending is the number of timers neither fired nor stopped.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// Advance moves the clock forward by d and runs the timers that came due.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due, rest []*timer
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			rest = append(rest, t)
		}
	}
	c.timers = rest
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.f()
	}
}
