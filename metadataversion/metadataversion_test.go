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

// The controller's request versions, at each boundary of Kafka 3.9's
// ControllerChannelManager.
func TestControllerRequestVersions(t *testing.T) {
	for _, c := range []struct {
		ibp                               string
		leaderAndIsr, update, stopReplica int16
	}{
		{"0.8.2", 0, 0, 0},
		{"0.9.0", 0, 1, 0},
		{"0.10.0-IV1", 0, 2, 0},
		{"0.10.2-IV0", 0, 3, 0},
		{"1.0-IV0", 1, 4, 0},
		{"2.1-IV2", 1, 4, 0},
		{"2.2-IV0", 2, 5, 1},
		{"2.4-IV0", 3, 5, 1},
		{"2.4-IV1", 4, 6, 2},
		{"2.6-IV0", 4, 6, 3},
		{"2.8-IV0", 4, 6, 3},
		{"2.8-IV1", 5, 7, 3},
		{"3.2-IV0", 6, 7, 3},
		{"3.3-IV3", 6, 7, 3},
		{"3.4-IV0", 7, 8, 4},
		{"3.9-IV0", 7, 8, 4},
	} {
		v, err := Parse(c.ibp)
		if err != nil {
			t.Fatal(err)
		}
		if got := [3]int16{v.LeaderAndIsrVersion(), v.UpdateMetadataVersion(), v.StopReplicaVersion()}; got != [3]int16{c.leaderAndIsr, c.update, c.stopReplica} {
			t.Errorf("%s: LeaderAndIsr, UpdateMetadata, StopReplica v%v, want %v", c.ibp, got, [3]int16{c.leaderAndIsr, c.update, c.stopReplica})
		}
	}
}
