package purgatory

import "time"

// Clock is the purgatory's source of time and timers; tests use a fake
// (purgatorytest.Clock) so that expiry is deterministic.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine once d has elapsed, unless the
	// returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did.
	Stop() bool
}

// SystemClock is the wall clock, with the runtime's timers: they are kept
// in a per-processor heap, which is what Kafka's timing wheel buys it, so
// no reaper goroutine is needed.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
