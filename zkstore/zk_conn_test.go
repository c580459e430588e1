package zkstore

import (
	"slices"
	"testing"
)

func TestParseZKConnect(t *testing.T) {
	for _, tc := range []struct {
		in      string
		servers []string
		chroot  string
		bad     bool
	}{
		{in: "127.0.0.1:2181", servers: []string{"127.0.0.1:2181"}},
		{in: "a:1,b:2/kafka/x", servers: []string{"a:1", "b:2"}, chroot: "/kafka/x"},
		{in: "a:1/", servers: []string{"a:1"}},
		{in: "/kafka", bad: true},
		{in: "a:1/kafka/", bad: true},
	} {
		s, c, err := parseZKConnect(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || !slices.Equal(s, tc.servers) || c != tc.chroot {
			t.Errorf("%q: %v %q %v", tc.in, s, c, err)
		}
	}
}
