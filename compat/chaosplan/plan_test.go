package chaosplan

import (
	"reflect"
	"testing"
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
