package metadataversion

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2.6", "2.6-IV0"},
		{"2.6-IV0", "2.6-IV0"},
		{"2.6.3", "2.6-IV0"},
		{"2.7", "2.7-IV2"}, // a release is its latest internal version
		{"2.7-IV1", "2.7-IV1"},
		{"3.9", "3.9-IV0"},
		{"3.7", "3.7-IV4"},
		{"0.10.0", "0.10.0-IV1"},
		{"0.10.2.1", "0.10.2-IV0"},
		{"0.9.0", "0.9.0"},
		{Default, "3.9-IV0"},
	} {
		v, err := Parse(tc.in)
		if err != nil || v.String() != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", tc.in, v, err, tc.want)
		}
	}
	for _, bad := range []string{"", "4.0", "2.7-IV3", "3.9-IV1", "x", "2"} {
		if v, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", bad, v)
		}
	}
	if Latest.String() != Default {
		t.Errorf("Latest %v, Default %s", Latest, Default)
	}
}

func TestMilestones(t *testing.T) {
	v := func(s string) Version { return mustParse(s) }
	for _, tc := range []struct {
		name  string
		rule  func(Version) bool
		first string
	}{
		{"AlterPartition", Version.AlterPartition, "2.7-IV2"},
		{"TopicIDs", Version.TopicIDs, "2.8-IV0"},
		{"AllocateProducerIDs", Version.AllocateProducerIDs, "3.0-IV0"},
		{"FeatureVersioning", Version.FeatureVersioning, "2.7-IV0"},
		{"TruncationOnFetch", Version.TruncationOnFetch, "2.7-IV1"},
		{"LeaderRecovery", Version.LeaderRecovery, "3.2-IV0"},
	} {
		first := v(tc.first)
		before := Version{index: first.index - 1}
		if !tc.rule(first) || !tc.rule(Latest) || tc.rule(before) {
			t.Errorf("%s: from %v (true at %v: %v; at %v: %v)", tc.name, first, first, tc.rule(first), before, tc.rule(before))
		}
	}
	for _, tc := range []struct {
		ibp                                string
		fetch, lai, um, stop, ofle, offset int16
		registration                       int
	}{
		{"2.6", 11, 4, 6, 3, 3, 5, 4},
		{"2.7-IV1", 12, 4, 6, 3, 3, 5, 5},
		{"2.8", 12, 5, 7, 3, 4, 6, 5},
		{"3.4", 13, 7, 8, 4, 4, 7, 5},
		{"3.5-IV1", 15, 7, 8, 4, 4, 8, 5},
		{"3.7", 16, 7, 8, 4, 4, 8, 5},
		{"3.9", 17, 7, 8, 4, 4, 9, 5},
	} {
		x := v(tc.ibp)
		got := []int16{x.FetchVersion(), x.LeaderAndIsrVersion(), x.UpdateMetadataVersion(), x.StopReplicaVersion(), x.OffsetForLeaderEpochVersion(), x.ListOffsetsVersion(), int16(x.BrokerRegistrationVersion())}
		want := []int16{tc.fetch, tc.lai, tc.um, tc.stop, tc.ofle, tc.offset, int16(tc.registration)}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: versions %v, want %v", tc.ibp, got, want)
				break
			}
		}
	}
}
