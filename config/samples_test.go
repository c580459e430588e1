package config

import (
	"fmt"
	"testing"
)

// The shipped samples must load cleanly: a warning there would teach users
// to ignore warnings.
func TestSampleFilesLoad(t *testing.T) {
	c, warnings, err := Load("server.properties", nil)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("server.properties: %v %q", err, warnings)
	}
	if !c.Standalone() || c.MetricsListener == "" || c.OffsetsTopicReplicationFactor != 1 {
		t.Errorf("server.properties: standalone=%v metrics=%q offsets rf=%d", c.Standalone(), c.MetricsListener, c.OffsetsTopicReplicationFactor)
	}
	for n := 1; n <= 3; n++ {
		path := fmt.Sprintf("cluster/broker-%d.properties", n)
		c, warnings, err := Load(path, nil)
		if err != nil || len(warnings) != 0 {
			t.Fatalf("%s: %v %q", path, err, warnings)
		}
		if c.BrokerID != int32(n) || c.Standalone() || c.Listeners[0].Port != 9091+n {
			t.Errorf("%s: id=%d standalone=%v listeners=%v", path, c.BrokerID, c.Standalone(), c.Listeners)
		}
	}
}
