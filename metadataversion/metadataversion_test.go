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
		{"AllocateProducerIDs", Version.AllocateProducerIDs, "3.0-IV0"},
		{"FeatureVersioning", Version.FeatureVersioning, "2.7-IV0"},
	} {
		first := v(tc.first)
		before := Version{index: first.index - 1}
		if !tc.rule(first) || !tc.rule(Latest) || tc.rule(before) {
			t.Errorf("%s: from %v (true at %v: %v; at %v: %v)", tc.name, first, first, tc.rule(first), before, tc.rule(before))
		}
	}
	for ibp, want := range map[string]int{"0.9.0": 2, "2.6": 4, "2.7-IV0": 5, "3.9": 5} {
		if got := v(ibp).BrokerRegistrationVersion(); got != want {
			t.Errorf("%s: registration version %d, want %d", ibp, got, want)
		}
	}
}
