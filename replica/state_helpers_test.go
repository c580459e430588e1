package replica

import (
	"slices"
	"testing"
	"time"
)

// ms is an explicit clock: every test time is milliseconds from a fixed
// origin, so no test reads the wall clock.
func ms(v int64) time.Time { return time.UnixMilli(1_700_000_000_000 + v) }

// checkLeaderInvariants panics-equivalent for tests: the documented
// invariants of LeaderState, checked after each step by the tests.
func checkLeaderInvariants(t *testing.T, s *LeaderState, prevHW int64) {
	t.Helper()
	if s.HighWatermark() > s.LogEndOffset() {
		t.Fatalf("HW %d > LEO %d", s.HighWatermark(), s.LogEndOffset())
	}
	if s.IsLeader() && s.HighWatermark() < prevHW {
		t.Fatalf("HW went backwards: %d -> %d", prevHW, s.HighWatermark())
	}
	if s.IsLeader() && !slices.Contains(s.Isr(), s.LocalID()) {
		t.Fatalf("leader %d not in ISR %v", s.LocalID(), s.Isr())
	}
}
