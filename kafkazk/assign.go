package kafkazk

import (
	"fmt"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// brokerMetadata is what replica assignment knows of a broker.
type brokerMetadata struct {
	ID   int32
	Rack string // "" = broker.rack unset
}

// KafkaError is a Kafka error code with the message Kafka puts next to it
// in responses (ErrorMessage), so that handlers can answer as Kafka does.
type KafkaError struct {
	Code    *kerr.Error
	Message string
}

func (e *KafkaError) Error() string { return e.Code.Message + ": " + e.Message }
func (e *KafkaError) Unwrap() error { return e.Code }

// errRackInfoIncomplete: some brokers have a rack and some do not, so a
// rack-aware assignment is impossible. Kafka throws AdminOperationException,
// which its API layer turns into UNKNOWN_SERVER_ERROR.
var errRackInfoIncomplete = &KafkaError{kerr.UnknownServerError,
	"Not all brokers have rack information for replica rack aware assignment."}

// assignReplicasToBrokers is Kafka's AdminUtils.assignReplicasToBrokers.
//
// Without racks: the first replica of each partition goes round-robin over
// the brokers from a start index; the others follow at a shift that grows
// by one every time the partitions have gone once round the brokers, so
// that a broker's followers are spread over the other brokers. With racks
// (every broker must have one): the same over a rack-alternated broker list,
// preferring for each further replica a broker on a rack (and then a broker)
// that has no replica of the partition yet.
//
// fixedStartIndex < 0 draws the start index and the initial shift from
// intn (two draws, in that order, like Kafka); Kafka's tests pin both with
// a fixed index. Partitions are numbered from max(0, startPartitionID)
// (CreatePartitions continues after the existing ones). Brokers are taken
// in id order, as Kafka's callers sort them.
//
// Errors are *KafkaError with Kafka's codes and messages.
func assignReplicasToBrokers(brokers []brokerMetadata, nPartitions, replicationFactor int, fixedStartIndex, startPartitionID int, intn func(int) int) (ReplicaMap, error) {
	if nPartitions <= 0 {
		return nil, &KafkaError{kerr.InvalidPartitions, "Number of partitions must be larger than 0."}
	}
	if replicationFactor <= 0 {
		return nil, &KafkaError{kerr.InvalidReplicationFactor, "Replication factor must be larger than 0."}
	}
	if replicationFactor > len(brokers) {
		return nil, &KafkaError{kerr.InvalidReplicationFactor, fmt.Sprintf(
			"Replication factor: %d larger than available brokers: %d.", replicationFactor, len(brokers))}
	}
	sorted := slices.Clone(brokers)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	withRack := 0
	for _, b := range sorted {
		if b.Rack != "" {
			withRack++
		}
	}
	if withRack == 0 {
		ids := make([]int32, len(sorted))
		for i, b := range sorted {
			ids[i] = b.ID
		}
		return assignRackUnaware(nPartitions, replicationFactor, ids, fixedStartIndex, startPartitionID, intn), nil
	}
	if withRack != len(sorted) {
		return nil, errRackInfoIncomplete
	}
	return assignRackAware(nPartitions, replicationFactor, sorted, fixedStartIndex, startPartitionID, intn), nil
}

// startAndShift are the first replica's start index and the followers'
// initial shift: both fixedStartIndex, or two random draws.
func startAndShift(fixedStartIndex, n int, intn func(int) int) (start, shift int) {
	if fixedStartIndex >= 0 {
		return fixedStartIndex, fixedStartIndex
	}
	start = intn(n)
	shift = intn(n)
	return start, shift
}

func assignRackUnaware(nPartitions, replicationFactor int, brokers []int32, fixedStartIndex, startPartitionID int, intn func(int) int) ReplicaMap {
	out := make(ReplicaMap, nPartitions)
	n := len(brokers)
	startIndex, nextReplicaShift := startAndShift(fixedStartIndex, n, intn)
	partition := max(0, startPartitionID)
	for range nPartitions {
		if partition > 0 && partition%n == 0 {
			nextReplicaShift++
		}
		first := (partition + startIndex) % n
		replicas := []int32{brokers[first]}
		for j := range replicationFactor - 1 {
			replicas = append(replicas, brokers[replicaIndex(first, nextReplicaShift, j, n)])
		}
		out[int32(partition)] = replicas
		partition++
	}
	return out
}

func assignRackAware(nPartitions, replicationFactor int, brokers []brokerMetadata, fixedStartIndex, startPartitionID int, intn func(int) int) ReplicaMap {
	rackOf := make(map[int32]string, len(brokers))
	racks := map[string]bool{}
	for _, b := range brokers {
		rackOf[b.ID] = b.Rack
		racks[b.Rack] = true
	}
	numRacks := len(racks)
	arranged := rackAlternatedBrokers(brokers)
	n := len(arranged)
	out := make(ReplicaMap, nPartitions)
	startIndex, nextReplicaShift := startAndShift(fixedStartIndex, n, intn)
	partition := max(0, startPartitionID)
	for range nPartitions {
		if partition > 0 && partition%n == 0 {
			nextReplicaShift++
		}
		first := (partition + startIndex) % n
		leader := arranged[first]
		replicas := []int32{leader}
		racksWith := map[string]bool{rackOf[leader]: true}
		brokersWith := map[int32]bool{leader: true}
		k := 0
		for range replicationFactor - 1 {
			for {
				b := arranged[replicaIndex(first, nextReplicaShift*numRacks, k, n)]
				rack := rackOf[b]
				k++
				// Take b unless its rack already has a replica while some
				// rack has none, or b already has one while some broker
				// has none.
				if (!racksWith[rack] || len(racksWith) == numRacks) &&
					(!brokersWith[b] || len(brokersWith) == n) {
					replicas = append(replicas, b)
					racksWith[rack] = true
					brokersWith[b] = true
					break
				}
			}
		}
		out[int32(partition)] = replicas
		partition++
	}
	return out
}

// rackAlternatedBrokers lists brokers taking one from each rack in turn
// (racks in name order, brokers of a rack in id order), e.g. rack1: 0,1,2,
// rack2: 3,4,5 gives 0,3,1,4,2,5.
func rackAlternatedBrokers(brokers []brokerMetadata) []int32 {
	byRack := map[string][]int32{}
	for _, b := range brokers {
		byRack[b.Rack] = append(byRack[b.Rack], b.ID)
	}
	racks := make([]string, 0, len(byRack))
	for r, ids := range byRack {
		racks = append(racks, r)
		slices.Sort(ids)
	}
	sort.Strings(racks)
	out := make([]int32, 0, len(brokers))
	for i := 0; len(out) < len(brokers); i++ {
		for _, r := range racks {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out
}

// replicaIndex is the index of the (replicaIndex+2)-th replica: shifted
// from the first by 1 + (shift + replicaIndex) mod (n-1), so it never lands
// on the first replica itself.
func replicaIndex(firstReplicaIndex, secondReplicaShift, replicaIndex, nBrokers int) int {
	shift := 1 + (secondReplicaShift+replicaIndex)%(nBrokers-1)
	return (firstReplicaIndex + shift) % nBrokers
}
