package logstore

import "testing"

// A new leader records its epoch at election (KAFKA-7415), before any
// append: asking for the previous epoch then ends at the election offset,
// and appends in the new epoch add no second entry.
func TestConformanceAssignLeaderEpoch(t *testing.T) {
	for name, l := range logImpls(t, smallCfg()) {
		t.Run(name, func(t *testing.T) {
			appendN(t, l, 2, 5, 0, 0) // 0..9 epoch 0
			if err := l.AssignLeaderEpoch(3, 10); err != nil {
				t.Fatal(err)
			}
			if e, o := l.EndOffsetForEpoch(0); e != 0 || o != 10 {
				t.Errorf("EndOffsetForEpoch(0) = %d %d, want 0 10", e, o)
			}
			if e, o := l.EndOffsetForEpoch(3); e != 3 || o != 10 {
				t.Errorf("EndOffsetForEpoch(3) = %d %d, want 3 10 (no appends yet)", e, o)
			}
			if err := l.AssignLeaderEpoch(2, 10); err != nil { // older: ignored
				t.Fatal(err)
			}
			appendN(t, l, 1, 5, 0, 3)
			got := l.LeaderEpochEntries()
			if len(got) != 2 || got[0] != (EpochEntry{0, 0}) || got[1] != (EpochEntry{3, 10}) {
				t.Fatalf("epochs %v, want [{0 0} {3 10}]", got)
			}
		})
	}
}
