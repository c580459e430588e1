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
	c, warnings, err = Load("secure.properties", nil)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("secure.properties: %v %q", err, warnings)
	}
	if s := c.ListenerSecurity("SSL"); s.SSL["ssl.client.auth"] != "required" || c.InterBrokerListenerName != "SASL_SSL" || !c.AuthorizerEnabled() {
		t.Errorf("secure.properties: %+v, inter-broker %s", s, c.InterBrokerListenerName)
	}
	if s := c.ListenerSecurity("SASL_SSL"); s.JAAS["PLAIN"] == "" || len(s.SASLMechanisms) != 3 {
		t.Errorf("secure.properties SASL_SSL: %+v", s)
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
