package kafkazk

import (
	"reflect"
	"testing"
)

// FuzzZNodeDecoders feeds arbitrary bytes to every znode decoder: another
// broker, a tool or a person with zookeeper-shell can write anything there,
// and the controller must answer with an error, never a panic. A partition
// state that decodes must survive a round trip, since leaders rewrite it.
func FuzzZNodeDecoders(f *testing.F) {
	for _, seed := range []string{
		`{"version":2,"brokerid":1,"timestamp":"1732000000000","kraftControllerEpoch":-1}`,
		`{"features":{"metadata.version":{"min_version":1,"max_version":21}},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"endpoints":["PLAINTEXT://kb1:9092"],"rack":"r1","jmx_port":-1,"host":"kb1","timestamp":"1732000000000","port":9092,"version":5}`,
		`{"partitions":{"0":[1,2,3],"1":[2,3,1]},"topic_id":"mNrG5q9wTf2yYyLZ1s9wWQ","adding_replicas":{},"removing_replicas":{},"version":3}`,
		`{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}`,
		`{"version":1,"partitions":[{"topic":"topic-a","partition":0}]}`,
		`{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,4]}]}`,
		`{"version":1,"config":{"min.insync.replicas":"2"}}`,
		`{"version":2,"entity_path":"topics/orders"}`,
		`{"version":"1","id":"gL9yRMv7SXKk6n0TQ4a8Pw"}`,
		`{"features":{"metadata.version":{"max_version_level":21}},"version":2,"status":1}`,
		`{"version":1,"broker":1,"block_start":"0","block_end":"999"}`,
		`{"version":1,"broker":2,"event":1}`,
		`3`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeControllerZNode(b)
		DecodeControllerEpoch(b)
		DecodeBrokerZNode(b)
		DecodeTopicZNode(b)
		DecodePartitionList(b)
		decodeReassignPartitions(b)
		DecodeLogDirEventZNode(b)
		DecodeConfigZNode(b)
		DecodeConfigChange(b)
		decodeClusterID(b)
		decodeFeatureZNode(b)
		DecodeProducerIDBlockZNode(b)
		if st, err := DecodePartitionStateZNode(b); err == nil {
			again, err := DecodePartitionStateZNode(st.Encode())
			if err != nil || !reflect.DeepEqual(again, st) {
				t.Fatalf("round trip of %s: %+v then %+v (%v)", b, st, again, err)
			}
		}
	})
}
