// Package clock is the source of time that kbroker's timer-driven parts
// (the group and transaction coordinators, the purgatory) take as input
// instead of calling time.Now, so that their timeouts are tested
// deterministically: Real is the wall clock, clocktest.Fake the tests'
// manual one.
package clock

import (
	"context"
	"time"
)

// Clock gives the time and runs functions after a delay.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine (or, for clocktest.Fake, in the
	// goroutine that advances the clock) once d has elapsed, unless the
	// returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started yet; it reports whether
	// it did so.
	Stop() bool
}

// Real is the wall clock, with the runtime's timers.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Every calls fn every interval (which must be positive) on the wall
// clock, in the calling goroutine, until ctx ends.
func Every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
