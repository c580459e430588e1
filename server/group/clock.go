package group

import "github.com/kbroker/kbroker/internal/clock"

// Clock is the coordinator's only source of time, injected so session and
// rebalance timeouts are tested deterministically.
type Clock = clock.Clock

// Timer is a pending Clock.AfterFunc.
type Timer = clock.Timer

// RealClock is the wall clock.
type RealClock = clock.Real
