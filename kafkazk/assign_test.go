package kafkazk

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func noRandom(t *testing.T) func(int) int {
	return func(int) int {
		t.Fatal("random source used with a fixed start index")
		return 0
	}
}

func brokersNoRack(ids ...int32) []brokerMetadata {
	out := make([]brokerMetadata, len(ids))
	for i, id := range ids {
		out[i] = brokerMetadata{ID: id}
	}
	return out
}

func brokersWithRacks(racks map[int32]string) []brokerMetadata {
	var out []brokerMetadata
	for id, r := range racks {
		out = append(out, brokerMetadata{ID: id, Rack: r})
	}
	return out
}

// Kafka's AdminTest.testReplicaAssignment (5 brokers, 10 partitions, RF 3,
// fixed start index 0).
func TestAssignRackUnawareMatchesKafka(t *testing.T) {
	got, err := assignReplicasToBrokers(brokersNoRack(4, 3, 2, 1, 0), 10, 3, 0, 0, noRandom(t))
	if err != nil {
		t.Fatal(err)
	}
	want := ReplicaMap{
		0: {0, 1, 2}, 1: {1, 2, 3}, 2: {2, 3, 4}, 3: {3, 4, 0}, 4: {4, 0, 1},
		5: {0, 2, 3}, 6: {1, 3, 4}, 7: {2, 4, 0}, 8: {3, 0, 1}, 9: {4, 1, 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// Kafka's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers.
func TestAssignRackAwareMatchesKafka(t *testing.T) {
	racks := map[int32]string{0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
	if got := rackAlternatedBrokers(brokersWithRacks(racks)); !slices.Equal(got, []int32{0, 3, 1, 5, 4, 2}) {
		t.Errorf("rack alternated list %v", got)
	}
	fewer := map[int32]string{0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2"}
	if got := rackAlternatedBrokers(brokersWithRacks(fewer)); !slices.Equal(got, []int32{0, 3, 1, 4, 2}) {
		t.Errorf("rack alternated list without 5: %v", got)
	}
	got, err := assignReplicasToBrokers(brokersWithRacks(racks), 7, 3, 0, 0, noRandom(t))
	if err != nil {
		t.Fatal(err)
	}
	want := ReplicaMap{
		0: {0, 3, 1}, 1: {3, 1, 5}, 2: {1, 5, 4}, 3: {5, 4, 2}, 4: {4, 2, 0}, 5: {2, 0, 3},
		// Second time round the followers shift.
		6: {0, 4, 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

// The random source gives the start index, then the follower shift.
func TestAssignRandomStart(t *testing.T) {
	draws := []int{2, 1}
	intn := func(n int) int {
		if n != 3 || len(draws) == 0 {
			t.Fatalf("unexpected draw intn(%d)", n)
		}
		v := draws[0]
		draws = draws[1:]
		return v
	}
	got, err := assignReplicasToBrokers(brokersNoRack(0, 1, 2), 3, 2, -1, 0, intn)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ReplicaMap{0: {2, 1}, 1: {0, 2}, 2: {1, 0}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// CreatePartitions continues the numbering after the existing partitions;
// the follower shift only grows when the numbering passes a multiple of the
// broker count inside this call (as Kafka: it does not replay the earlier
// rounds).
func TestAssignFromStartPartition(t *testing.T) {
	got, err := assignReplicasToBrokers(brokersNoRack(0, 1, 2, 3, 4), 5, 3, 0, 6, noRandom(t))
	if err != nil {
		t.Fatal(err)
	}
	want := ReplicaMap{6: {1, 2, 3}, 7: {2, 3, 4}, 8: {3, 4, 0}, 9: {4, 0, 1}, 10: {0, 2, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

// Issue 3's acceptance: racks a,a,b,b,c,c with RF 3 put every partition on
// three racks, whatever the random start; leaders and replicas spread
// evenly (Kafka's assertReplicaDistribution).
func TestAssignRackAwareSpreadsOverRacks(t *testing.T) {
	racks := map[int32]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
	for start := 0; start < 6; start++ {
		for shift := 0; shift < 6; shift++ {
			draws := []int{start, shift}
			intn := func(int) int { v := draws[0]; draws = draws[1:]; return v }
			got, err := assignReplicasToBrokers(brokersWithRacks(racks), 12, 3, -1, 0, intn)
			if err != nil {
				t.Fatal(err)
			}
			leaders := map[int32]int{}
			replicas := map[int32]int{}
			for p, rs := range got {
				seen := map[string]bool{}
				for _, b := range rs {
					seen[racks[b]] = true
					replicas[b]++
				}
				if len(seen) != 3 || len(rs) != 3 {
					t.Fatalf("start %d shift %d partition %d: replicas %v on racks %v", start, shift, p, rs, seen)
				}
				leaders[rs[0]]++
			}
			for b := range racks {
				if leaders[b] != 2 || replicas[b] != 6 {
					t.Fatalf("start %d shift %d: broker %d leads %d, holds %d", start, shift, b, leaders[b], replicas[b])
				}
			}
		}
	}
}

// More replicas than racks: every rack gets one, then replicas stay on
// distinct brokers.
func TestAssignRackAwareMoreReplicasThanRacks(t *testing.T) {
	racks := map[int32]string{0: "r1", 1: "r1", 2: "r2", 3: "r2"}
	got, err := assignReplicasToBrokers(brokersWithRacks(racks), 8, 3, 1, 0, noRandom(t))
	if err != nil {
		t.Fatal(err)
	}
	for p, rs := range got {
		distinct := map[int32]bool{}
		onRack := map[string]bool{}
		for _, b := range rs {
			distinct[b] = true
			onRack[racks[b]] = true
		}
		if len(distinct) != 3 || len(onRack) != 2 {
			t.Errorf("partition %d: %v", p, rs)
		}
	}
}

func TestAssignErrors(t *testing.T) {
	five := brokersNoRack(0, 1, 2, 3, 4)
	if _, err := assignReplicasToBrokers(five, 0, 1, 0, 0, nil); !errors.Is(err, kerr.InvalidPartitions) {
		t.Errorf("0 partitions: %v", err)
	}
	if _, err := assignReplicasToBrokers(five, 10, 0, 0, 0, nil); !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Errorf("RF 0: %v", err)
	}
	_, err := assignReplicasToBrokers(five, 10, 6, 0, 0, nil)
	if !errors.Is(err, kerr.InvalidReplicationFactor) || !strings.HasSuffix(err.Error(), ": Replication factor: 6 larger than available brokers: 5.") {
		t.Errorf("RF 6 of 5: %v", err)
	}
	var ke *KafkaError
	if !errors.As(err, &ke) || ke.Message != "Replication factor: 6 larger than available brokers: 5." {
		t.Errorf("RF 6 of 5: %v", err)
	}
	mixed := []brokerMetadata{{ID: 0, Rack: "a"}, {ID: 1}}
	if _, err := assignReplicasToBrokers(mixed, 1, 1, 0, 0, nil); !errors.Is(err, errRackInfoIncomplete) {
		t.Errorf("mixed racks: %v", err)
	}
}
