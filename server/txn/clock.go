package txn

import "github.com/kbroker/kbroker/internal/clock"

// Clock is the coordinator's only source of time, injected so transaction
// timeouts, expiry and marker retries are tested deterministically.
type Clock = clock.Clock

// Timer is a pending Clock.AfterFunc.
type Timer = clock.Timer

// RealClock is the wall clock.
type RealClock = clock.Real
