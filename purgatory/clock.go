package purgatory

import "github.com/kbroker/kbroker/internal/clock"

// Clock is the purgatory's source of time and timers; tests use a fake
// (clocktest.Fake) so that expiry is deterministic.
type Clock = clock.Clock

// Timer is a pending Clock.AfterFunc.
type Timer = clock.Timer

// SystemClock is the wall clock, with the runtime's timers: they are kept
// in a per-processor heap, which is what Kafka's timing wheel buys it, so
// no reaper goroutine is needed.
type SystemClock = clock.Real
