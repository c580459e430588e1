package txn

import "time"

// Clock is the coordinator's only source of time, injected so transaction
// timeouts, expiry and marker retries are tested deterministically.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine (or, for the tests' FakeClock,
	// in the goroutine that advances the clock) once d has elapsed.
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
