package kafkazk

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/kbroker/kbroker/zkstore"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Admin operations (Kafka's AdminZkClient as ZkAdminManager calls it): they
// write ZooKeeper directly; the controller reacts to the znodes through its
// watches. Topic creation, deletion and partition creation are answered
// only by the controller (NOT_CONTROLLER elsewhere), as in Kafka.

// NewTopicID is Kafka's Uuid.randomUuid: never the reserved zero and one
// ids, and never one whose string form starts with '-', which command-line
// tools would take for an option.
func NewTopicID() [16]byte {
	for {
		var id [16]byte
		if _, err := rand.Read(id[:]); err != nil {
			panic(err)
		}
		if id == ([16]byte{}) || id == ([16]byte{15: 1}) || strings.HasPrefix(EncodeUUID(id), "-") {
			continue
		}
		return id
	}
}

// RandIntn is a uniform random int in [0, n) from crypto/rand, the
// default random source of replica assignment.
func RandIntn(n int) int {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		panic(err)
	}
	return int(v.Int64())
}

const maxTopicNameLength = 249

// errUnknownTopic is Kafka's answer for a topic that does not exist.
var errUnknownTopic = &KafkaError{kerr.UnknownTopicOrPartition, "This server does not host this topic-partition."}

// ValidateTopicName is Kafka's Topic.validate, with its messages. The
// broker checks names with it before asking the controller, which checks
// again: one rule for every place a name comes in.
func ValidateTopicName(name string) error {
	switch {
	case name == "":
		return &KafkaError{kerr.InvalidTopicException, "Topic name is illegal, it can't be empty"}
	case name == "." || name == "..":
		return &KafkaError{kerr.InvalidTopicException, `Topic name cannot be "." or ".."`}
	case len(name) > maxTopicNameLength:
		return &KafkaError{kerr.InvalidTopicException, fmt.Sprintf(
			"Topic name is illegal, it can't be longer than %d characters, topic name: %s", maxTopicNameLength, name)}
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return &KafkaError{kerr.InvalidTopicException, fmt.Sprintf(
				"Topic name %q is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'", name)}
		}
	}
	return nil
}

func unifyCollision(name string) string { return strings.ReplaceAll(name, ".", "_") }

// liveBrokerMetadata reads /brokers/ids, as AdminZkClient does, for
// assignment.
func liveBrokerMetadata(zk zkstore.Client) ([]brokerMetadata, error) {
	names, _, err := zk.Children(BrokerIDsPath)
	if err != nil {
		return nil, err
	}
	var out []brokerMetadata
	for _, n := range names {
		id, err := ParseBrokerID(n)
		if err != nil {
			continue
		}
		data, _, err := zk.Get(BrokerIDPath(id))
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		reg, err := DecodeBrokerZNode(data)
		if err != nil {
			continue
		}
		out = append(out, brokerMetadata{ID: id, Rack: reg.Rack})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// validateAssignment is AdminZkClient.validateTopicCreate's check of an
// explicit assignment.
func validateAssignment(assignment map[int32][]int32) error {
	if len(assignment) == 0 {
		return &KafkaError{kerr.InvalidReplicaAssignment, "Replica assignment must not be empty."}
	}
	rf := -1
	for p := int32(0); p < int32(len(assignment)); p++ {
		rs, ok := assignment[p]
		if !ok {
			return &KafkaError{kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence"}
		}
		if len(rs) == 0 {
			return &KafkaError{kerr.InvalidReplicationFactor, "Replication factor must be larger than 0."}
		}
		if rf >= 0 && len(rs) != rf {
			return &KafkaError{kerr.InvalidReplicaAssignment, "All partitions should have the same number of replicas"}
		}
		rf = len(rs)
		if len(distinctReplicas(rs)) != len(rs) {
			return &KafkaError{kerr.InvalidReplicaAssignment, fmt.Sprintf("Duplicate replica assignment found: %v", assignment)}
		}
	}
	return nil
}

// CreateTopic writes a new topic as AdminZkClient.createTopicWithAssignment
// does: /config/topics/<t> first, then /brokers/topics/<t> with a fresh
// topic id. Either partitions and rf (assigned with intn, rack-aware when
// every broker has a rack) or an explicit assignment (then both are -1).
func CreateTopic(zk zkstore.Client, name string, partitions int32, rf int16, assignment map[int32][]int32, configs map[string]string, validateOnly bool, intn func(int) int, topicID func() [16]byte) ([16]byte, error) {
	var zero [16]byte
	if err := ValidateTopicName(name); err != nil {
		return zero, err
	}
	if ok, _, err := zk.Exists(TopicPath(name)); err != nil {
		return zero, err
	} else if ok {
		return zero, &KafkaError{kerr.TopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", name)}
	}
	if ok, _, err := zk.Exists(DeleteTopicPath(name)); err != nil {
		return zero, err
	} else if ok {
		return zero, &KafkaError{kerr.TopicAlreadyExists, fmt.Sprintf("Topic '%s' is marked for deletion.", name)}
	}
	existing, _, err := zk.Children(BrokerTopicsPath)
	if err != nil {
		return zero, err
	}
	for _, t := range existing {
		if t != name && unifyCollision(t) == unifyCollision(name) {
			return zero, &KafkaError{kerr.InvalidTopicException, fmt.Sprintf("Topic '%s' collides with existing topic: %s", name, t)}
		}
	}
	var assigned ReplicaMap
	if assignment != nil {
		if partitions != -1 || rf != -1 {
			return zero, &KafkaError{kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."}
		}
		if err := validateAssignment(assignment); err != nil {
			return zero, err
		}
		assigned = ReplicaMap{}
		for p, rs := range assignment {
			assigned[p] = slices.Clone(rs)
		}
	} else {
		brokers, err := liveBrokerMetadata(zk)
		if err != nil {
			return zero, err
		}
		if assigned, err = assignReplicasToBrokers(brokers, int(partitions), int(rf), -1, -1, intn); err != nil {
			return zero, err
		}
	}
	if validateOnly {
		return zero, nil
	}
	if configs == nil {
		configs = map[string]string{}
	}
	if err := SetEntityConfig(zk, ConfigTypeTopic, name, configs); err != nil {
		return zero, err
	}
	id := topicID()
	z := TopicZNode{Version: 3, TopicID: id, Partitions: assigned}
	if err := CreateRecursive(zk, BrokerTopicsPath); err != nil {
		return zero, err
	}
	if _, err := zk.Create(TopicPath(name), z.Encode(), zkstore.ModePersistent); err != nil {
		if errors.Is(err, zkstore.ErrNodeExists) {
			return zero, &KafkaError{kerr.TopicAlreadyExists, fmt.Sprintf("Topic '%s' already exists.", name)}
		}
		return zero, err
	}
	return id, nil
}

// SetEntityConfig creates or replaces /config/<type>/<name>.
func SetEntityConfig(zk zkstore.Client, entityType, name string, configs map[string]string) error {
	path := ConfigEntityPath(entityType, name)
	data := encodeConfigZNode(configs)
	if _, err := zk.Set(path, data, -1); err == nil || !errors.Is(err, zkstore.ErrNoNode) {
		return err
	}
	if err := CreateRecursive(zk, configPath+"/"+entityType); err != nil {
		return err
	}
	_, err := zk.Create(path, data, zkstore.ModePersistent)
	if errors.Is(err, zkstore.ErrNodeExists) {
		_, err = zk.Set(path, data, -1)
	}
	return err
}

// MarkTopicForDeletion creates /admin/delete_topics/<t>; the controller
// deletes the topic.
func MarkTopicForDeletion(zk zkstore.Client, name string) error {
	if ok, _, err := zk.Exists(TopicPath(name)); err != nil {
		return err
	} else if !ok {
		return errUnknownTopic
	}
	_, err := zk.Create(DeleteTopicPath(name), nil, zkstore.ModePersistent)
	if errors.Is(err, zkstore.ErrNodeExists) {
		return nil
	}
	return err
}

// CreatePartitions adds partitions to a topic up to count, assigned with
// intn or as given, by rewriting /brokers/topics/<t>.
func CreatePartitions(zk zkstore.Client, name string, count int32, assignment [][]int32, validateOnly bool, intn func(int) int) error {
	data, st, err := zk.Get(TopicPath(name))
	if errors.Is(err, zkstore.ErrNoNode) {
		return errUnknownTopic
	}
	if err != nil {
		return err
	}
	if ok, _, err := zk.Exists(DeleteTopicPath(name)); err != nil {
		return err
	} else if ok {
		return &KafkaError{kerr.InvalidTopicException, fmt.Sprintf("The topic %s is queued for deletion.", name)}
	}
	z, err := DecodeTopicZNode(data)
	if err != nil {
		return err
	}
	if len(z.Adding) > 0 || len(z.Removing) > 0 {
		return &KafkaError{kerr.ReassignmentInProgress, "A partition reassignment is in progress."}
	}
	existing := int32(len(z.Partitions))
	switch {
	case count < existing:
		return &KafkaError{kerr.InvalidPartitions, fmt.Sprintf("Topic currently has %d partitions, which is higher than the requested %d.", existing, count)}
	case count == existing:
		return &KafkaError{kerr.InvalidPartitions, fmt.Sprintf("Topic already has %d partitions.", existing)}
	}
	p0 := z.Partitions[0]
	brokers, err := liveBrokerMetadata(zk)
	if err != nil {
		return err
	}
	added := ReplicaMap{}
	if assignment != nil {
		if int32(len(assignment)) != count-existing {
			return &KafkaError{kerr.InvalidReplicaAssignment, fmt.Sprintf("Increasing the number of partitions by %d but %d assignments provided.", count-existing, len(assignment))}
		}
		live := map[int32]bool{}
		for _, b := range brokers {
			live[b.ID] = true
		}
		for i, rs := range assignment {
			p := existing + int32(i)
			if len(rs) != len(p0) {
				return &KafkaError{kerr.InvalidReplicaAssignment, fmt.Sprintf(
					"Inconsistent replication factor between partitions, partition 0 has %d while partitions [%d] have replication factors [%d], respectively.", len(p0), p, len(rs))}
			}
			if len(distinctReplicas(rs)) != len(rs) {
				return &KafkaError{kerr.InvalidReplicaAssignment, fmt.Sprintf("Duplicate brokers not allowed in replica assignment: %v for partition id %d.", rs, p)}
			}
			for _, r := range rs {
				if !live[r] {
					return &KafkaError{kerr.InvalidReplicaAssignment, fmt.Sprintf("Unknown broker(s) in replica assignment: %d.", r)}
				}
			}
			added[p] = slices.Clone(rs)
		}
	} else {
		// Continue the round-robin where partition 0's leader sits.
		start := 0
		if len(p0) > 0 {
			for i, b := range brokers {
				if b.ID >= p0[0] {
					start = i
					break
				}
			}
		}
		added, err = assignReplicasToBrokers(brokers, int(count-existing), len(p0), start, int(existing), intn)
		if err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	for p, rs := range added {
		z.Partitions[p] = rs
	}
	z.Version = 3
	if _, err := zk.Set(TopicPath(name), z.Encode(), st.Version); err != nil {
		if errors.Is(err, zkstore.ErrBadVersion) {
			return &KafkaError{kerr.UnknownServerError, "The topic changed while partitions were being added; retry."}
		}
		return err
	}
	return nil
}

// SetTopicConfig replaces the topic's overrides in /config/topics/<t> and
// announces the change in /config/changes, where every broker and the
// controller watch.
func SetTopicConfig(zk zkstore.Client, name string, configs map[string]string) error {
	if ok, _, err := zk.Exists(TopicPath(name)); err != nil {
		return err
	} else if !ok {
		return errUnknownTopic
	}
	if err := SetEntityConfig(zk, ConfigTypeTopic, name, configs); err != nil {
		return err
	}
	return announceConfigChange(zk, ConfigTypeTopic+"/"+name)
}

// ErrNotController answers admin operations on a broker that is not the
// active controller.
var ErrNotController = &KafkaError{kerr.NotController, "This is not the correct controller for this cluster."}

func distinctReplicas(rs []int32) []int32 {
	out := []int32{}
	for _, r := range rs {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
