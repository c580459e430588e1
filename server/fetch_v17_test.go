package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch v17 is what a Kafka 3.9 follower sends at its default
// inter.broker.protocol.version; it adds only the ReplicaDirectoryId tag
// (KIP-853), which a ZooKeeper-mode leader has no use for. A kbroker leader
// serves it as v16: the follower is known by its ReplicaState and gets
// the records.
func TestFollowerFetchV17(t *testing.T) {
	b := leaderOverTwoEpochs(t)

	req := replica2Fetch(17, 0, -1)
	req.Topics[0].Partitions[0].ReplicaDirectoryID = [16]byte{9, 9, 9}
	// Through the wire encoding, as a Kafka follower's request arrives.
	wire := kmsg.NewPtrFetchRequest()
	wire.Version = 17
	if err := wire.ReadFrom(req.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	resp := handle[*kmsg.FetchResponse](t, b, wire)
	if resp.Version != 17 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("answer: %+v", resp)
	}
	got := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(got.ErrorCode); err != nil {
		t.Fatalf("v17 follower fetch: %v", err)
	}
	if len(got.RecordBatches) == 0 {
		t.Fatal("no records for the v17 follower fetch")
	}
	// And the broker says it serves v17, or a Kafka follower's request
	// would be closed as an unsupported version before reaching here.
	av := handle[*kmsg.ApiVersionsResponse](t, b, &kmsg.ApiVersionsRequest{Version: 3})
	for _, k := range av.ApiKeys {
		if k.ApiKey == kmsg.Fetch.Int16() && k.MaxVersion < 17 {
			t.Fatalf("ApiVersions: Fetch up to v%d, want v17", k.MaxVersion)
		}
	}
}
