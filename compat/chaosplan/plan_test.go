package chaosplan

import (
	"reflect"
	"testing"
	"time"
)

func TestPlanIsAFunctionOfTheSeed(t *testing.T) {
	a, b := Plan(42, 300, 3), Plan(42, 300, 3)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	if reflect.DeepEqual(a, Plan(43, 300, 3)) {
		t.Fatal("two seeds gave the same schedule")
	}
	if len(a) != 300 {
		t.Fatalf("%d faults, want 300", len(a))
	}
}

func TestPlanCoversEveryKindAndStaysInBounds(t *testing.T) {
	seen := map[Kind]bool{}
	overlaps := 0
	for i, f := range Plan(7, 400, 3) {
		seen[f.Kind] = true
		if f.Index != i+1 || f.Hold <= 0 || f.Gap <= 0 {
			t.Fatalf("fault %+v", f)
		}
		if f.Target == AnyBroker && (f.Broker < 1 || f.Broker > 3) {
			t.Fatalf("fault %v names broker %d", f, f.Broker)
		}
		if (f.Target == ZooKeeper) != (f.Kind == ZKPause || f.Kind == ZKRestart) {
			t.Fatalf("fault %v: target and kind disagree", f)
		}
		if f.Overlaps {
			overlaps++
		}
	}
	for _, k := range []Kind{KillRestart, PauseResume, TermRestart, ZKPause, ZKRestart,
		NetIsolate, NetCutZK, NetCutPeers, NetCutClient, NetLossy} {
		if !seen[k] {
			t.Errorf("400 faults without a %s", k)
		}
	}
	if overlaps == 0 {
		t.Error("no overlapping faults")
	}
}

// The default quiet gaps replay the schedules drawn before they could be
// chosen, and other gaps bound every non-overlapping fault's gap.
func TestQuietGaps(t *testing.T) {
	if !reflect.DeepEqual(Plan(42, 50, 3), PlanQuiet(42, 50, 3, DefaultQuiet)) {
		t.Fatal("Plan and PlanQuiet with the default gaps differ")
	}
	q, err := ParseQuiet("5s-15s")
	if err != nil || q != (Quiet{Min: 5 * time.Second, Max: 15 * time.Second}) {
		t.Fatalf("ParseQuiet: %v, %v", q, err)
	}
	for _, f := range PlanQuiet(42, 200, 3, q) {
		if !f.Overlaps && (f.Gap < q.Min || f.Gap >= q.Max) {
			t.Fatalf("%v: gap outside %v", f, q)
		}
	}
	for _, bad := range []string{"5s", "15s-5s", "x-1s", "-1s-2s"} {
		if _, err := ParseQuiet(bad); err == nil {
			t.Errorf("ParseQuiet(%q) accepted", bad)
		}
	}
}
