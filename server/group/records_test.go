package group

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRecordsMatchKafkaSchemas checks that what we append decodes with
// kmsg's __consumer_offsets types at the versions Kafka 3.9 writes.
func TestRecordsMatchKafkaSchemas(t *testing.T) {
	h := newHarness(t, nil)
	ids, gen := h.stableGroup("g", 2, "t")
	h.c.OffsetCommit(context.Background(), commitRequest(8, "g", ids[0], gen, "t", map[int32]int64{4: 44}))
	ret := commitRequest(2, "r", "", -1, "t", map[int32]int64{0: 1})
	ret.RetentionTimeMillis = 60_000
	h.c.OffsetCommit(context.Background(), ret)
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"r"}
	h.c.DeleteGroups(context.Background(), del)

	seen := map[string]int{}
	for p := int32(0); p < testPartitions; p++ {
		for _, r := range h.log.Records(p) {
			switch v := binary.BigEndian.Uint16(r.Key); v {
			case 1:
				var k kmsg.OffsetCommitKey
				if err := k.ReadFrom(r.Key); err != nil {
					t.Fatalf("offset key: %v", err)
				}
				if h.c.PartitionFor(k.Group) != p {
					t.Fatalf("group %s written to partition %d", k.Group, p)
				}
				if r.Value == nil {
					seen["offset tombstone"]++
					continue
				}
				var val kmsg.OffsetCommitValue
				if err := val.ReadFrom(r.Value); err != nil {
					t.Fatalf("offset value: %v", err)
				}
				switch {
				case k.Group == "g" && val.Version == 3 && val.Offset == 44 && val.LeaderEpoch == 7 && val.Metadata == "md" &&
					val.CommitTimestamp == h.clock.Now().UnixMilli():
					seen["offset v3"]++
				case k.Group == "r" && val.Version == 1 && val.ExpireTimestamp == val.CommitTimestamp+60_000:
					seen["offset v1"]++
				default:
					t.Fatalf("unexpected offset record %+v %+v", k, val)
				}
			case 2:
				var k kmsg.GroupMetadataKey
				if err := k.ReadFrom(r.Key); err != nil {
					t.Fatalf("group key: %v", err)
				}
				if r.Value == nil {
					seen["group tombstone "+k.Group]++
					continue
				}
				var val kmsg.GroupMetadataValue
				if err := val.ReadFrom(r.Value); err != nil {
					t.Fatalf("group value: %v", err)
				}
				if val.Version != 3 || val.ProtocolType != "consumer" || val.Generation != gen || *val.Protocol != "range" ||
					val.Leader == nil || *val.Leader != ids[0] || len(val.Members) != 2 || val.CurrentStateTimestamp <= 0 {
					t.Fatalf("group value %+v", val)
				}
				for _, m := range val.Members {
					var s kmsg.ConsumerMemberMetadata
					if err := s.ReadFrom(m.Subscription); err != nil || len(s.Topics) != 1 || s.Topics[0] != "t" {
						t.Fatalf("member subscription %v %+v", err, s)
					}
					if len(assignedPartitions(t, m.Assignment)) != 3 || m.SessionTimeoutMillis != int32(testSession.Milliseconds()) ||
						m.RebalanceTimeoutMillis != int32(testRebalance.Milliseconds()) || m.ClientID != "client" {
						t.Fatalf("member %+v", m)
					}
				}
				seen["group v3"]++
			default:
				t.Fatalf("key version %d", v)
			}
		}
	}
	for _, k := range []string{"offset v3", "offset v1", "offset tombstone", "group v3", "group tombstone r"} {
		if seen[k] != 1 {
			t.Fatalf("%s seen %d times (all: %v)", k, seen[k], seen)
		}
	}
}
