// Package metadataversion is inter.broker.protocol.version: the versions of
// Kafka's inter-broker protocol, in order, and what each one decides about
// what a broker sends to and expects from the other brokers and the
// controller (Kafka's MetadataVersion, server-common). A cluster that mixes
// kbroker and Kafka brokers, or is being upgraded, runs every broker at the
// same version until all of them understand the next one. docs/ibp.md lists
// the milestones and where they come from.
package metadataversion

import (
	"fmt"
	"strings"
)

// Version is one inter.broker.protocol.version. The zero value is not a
// version; compare versions with Less and AtLeast.
type Version struct {
	// index orders the versions (1-based, so that the zero value is none).
	index int
}

// known lists Kafka 3.9's versions, oldest first, as release and
// internal-version suffix ("" for the releases before internal versions).
var known = []struct{ release, iv string }{
	{"0.8.0", ""}, {"0.8.1", ""}, {"0.8.2", ""}, {"0.9.0", ""},
	{"0.10.0", "IV0"}, {"0.10.0", "IV1"},
	{"0.10.1", "IV0"}, {"0.10.1", "IV1"}, {"0.10.1", "IV2"},
	{"0.10.2", "IV0"},
	{"0.11.0", "IV0"}, {"0.11.0", "IV1"}, {"0.11.0", "IV2"},
	{"1.0", "IV0"}, {"1.1", "IV0"},
	{"2.0", "IV0"}, {"2.0", "IV1"},
	{"2.1", "IV0"}, {"2.1", "IV1"}, {"2.1", "IV2"},
	{"2.2", "IV0"}, {"2.2", "IV1"},
	{"2.3", "IV0"}, {"2.3", "IV1"},
	{"2.4", "IV0"}, {"2.4", "IV1"},
	{"2.5", "IV0"}, {"2.6", "IV0"},
	{"2.7", "IV0"}, {"2.7", "IV1"}, {"2.7", "IV2"},
	{"2.8", "IV0"}, {"2.8", "IV1"},
	{"3.0", "IV0"}, {"3.0", "IV1"},
	{"3.1", "IV0"}, {"3.2", "IV0"},
	{"3.3", "IV0"}, {"3.3", "IV1"}, {"3.3", "IV2"}, {"3.3", "IV3"},
	{"3.4", "IV0"},
	{"3.5", "IV0"}, {"3.5", "IV1"}, {"3.5", "IV2"},
	{"3.6", "IV0"}, {"3.6", "IV1"}, {"3.6", "IV2"},
	{"3.7", "IV0"}, {"3.7", "IV1"}, {"3.7", "IV2"}, {"3.7", "IV3"}, {"3.7", "IV4"},
	{"3.8", "IV0"},
	{"3.9", "IV0"},
}

// byName maps both spellings Kafka accepts, "2.7-IV1" and the release
// "2.7" (its latest internal version), to versions.
var byName = func() map[string]Version {
	m := make(map[string]Version, 2*len(known))
	for i, k := range known {
		v := Version{index: i + 1}
		m[v.String()] = v
		m[k.release] = v // later internal versions of a release overwrite
	}
	return m
}()

func mustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// The milestones the rules test.
var (
	v0_9_0      = mustParse("0.9.0")
	v0_10_0_IV1 = mustParse("0.10.0-IV1")
	v0_10_2_IV0 = mustParse("0.10.2-IV0")
	v1_0_IV0    = mustParse("1.0-IV0")
	v2_2_IV0    = mustParse("2.2-IV0")
	v2_4_IV0    = mustParse("2.4-IV0")
	v2_4_IV1    = mustParse("2.4-IV1")
	v2_6_IV0    = mustParse("2.6-IV0")
	v2_7_IV0    = mustParse("2.7-IV0")
	v2_7_IV2    = mustParse("2.7-IV2")
	v2_8_IV0    = mustParse("2.8-IV0")
	v2_8_IV1    = mustParse("2.8-IV1")
	v3_0_IV0    = mustParse("3.0-IV0")
	v3_2_IV0    = mustParse("3.2-IV0")
	v3_4_IV0    = mustParse("3.4-IV0")
	v3_9_IV0    = mustParse("3.9-IV0")
)

// Latest is the newest version Kafka 3.9 knows, and its default.
var Latest = v3_9_IV0

// OrLatest is v, or Latest for the zero value (a configuration that does
// not name one).
func (v Version) OrLatest() Version {
	if v == (Version{}) {
		return Latest
	}
	return v
}

// Default is inter.broker.protocol.version's default in Kafka 3.9.
const Default = "3.9-IV0"

// Parse reads a version as Kafka does (MetadataVersion.fromVersionString):
// "2.7-IV1", or a release, "2.7", meaning its latest internal version; a
// release with more segments than Kafka's names ("2.6.3", "0.10.2.1") is
// cut to them.
func Parse(s string) (Version, error) {
	key := s
	if !strings.Contains(s, "-") {
		segments := strings.Split(s, ".")
		n := 2
		if strings.HasPrefix(s, "0.") {
			n = 3
		}
		if len(segments) > n {
			key = strings.Join(segments[:n], ".")
		}
	}
	if v, ok := byName[key]; ok {
		return v, nil
	}
	return Version{}, fmt.Errorf("version %q is not a valid inter.broker.protocol.version", s)
}

// String is the version's full name, "2.7-IV1" (or "0.9.0").
func (v Version) String() string {
	if v.index == 0 {
		return "none"
	}
	k := known[v.index-1]
	if k.iv == "" {
		return k.release
	}
	return k.release + "-" + k.iv
}

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool { return v.index >= o.index }
