package server

// CreateTopics, versions 2-7.
//
// Each topic is checked the way Kafka's controller checks it, in the same
// order and with the same messages: duplicate entries, the name, existence,
// both counts and an assignment given, partitions and replication factor
// (-1 = broker default), the manual assignment, then the configs; the
// controller then places the replicas on the live brokers. ValidateOnly runs every check and creates nothing. v5+ returns the
// partition count, replication factor and every topic config with its
// source; v7 the topic id.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.CreateTopics.Int16(), 2, 7, handleCreateTopics) }

func handleCreateTopics(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.CreateTopicsRequest)
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.SetVersion(req.Version)

	count := map[string]int{}
	for _, rt := range r.Topics {
		count[rt.Topic]++
	}
	for _, rt := range r.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		// Kafka's handleCreateTopicsRequest: without DESCRIBE_CONFIGS on
		// the topic the answer carries none of what the topic is or would
		// be (configs, partitions, replication factor, id) and says so in
		// the config error; a creation that was tried and failed clears it.
		describable := b.topicAllowed(req, kmsg.ACLOperationDescribeConfigs, rt.Topic)
		if !describable {
			st.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
		}
		if count[rt.Topic] > 1 {
			st.ErrorCode = kerr.InvalidRequest.Code
			st.ErrorMessage = nullableString("Duplicate topic name.")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if !b.authorizeCreateTopic(req, rt.Topic) {
			st.ErrorCode = kerr.TopicAuthorizationFailed.Code
			st.ErrorMessage = nullableString("Authorization failed.")
			resp.Topics = append(resp.Topics, st)
			continue
		}
		t, err := b.createTopicFromRequest(rt, r.ValidateOnly)
		if err != nil {
			st.ErrorCode, st.ErrorMessage = adminError(err, rt.Topic)
			st.ConfigErrorCode = 0
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if !describable {
			resp.Topics = append(resp.Topics, st)
			continue
		}
		st.NumPartitions = int32(len(t.Partitions))
		st.ReplicationFactor = t.replicationFactor()
		if !r.ValidateOnly {
			st.TopicID = t.ID
		}
		for _, e := range b.topicConfigEntries(t.Configs, false, false) {
			c := kmsg.NewCreateTopicsResponseTopicConfig()
			c.Name = e.Name
			c.Value = e.Value
			c.ReadOnly = e.ReadOnly
			c.Source = int8(e.Source)
			c.IsSensitive = e.IsSensitive
			st.Configs = append(st.Configs, c)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}

// createTopicFromRequest validates one CreateTopics entry with Kafka's
// messages and hands it to the topic table.
func (b *Broker) createTopicFromRequest(rt kmsg.CreateTopicsRequestTopic, validateOnly bool) (*Topic, error) {
	if msg := topicNameProblem(rt.Topic); msg != "" {
		return nil, &topicError{code: kerr.InvalidTopicException.Code, msg: msg}
	}
	if b.topic(rt.Topic) != nil {
		return nil, newTopicError(kerr.TopicAlreadyExists, "Topic '%s' already exists.", rt.Topic)
	}
	if c := b.collidingTopic(rt.Topic); c != "" {
		return nil, newTopicError(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", rt.Topic, c)
	}
	req := CreateTopicRequest{
		Name:              rt.Topic,
		NumPartitions:     rt.NumPartitions,
		ReplicationFactor: rt.ReplicationFactor,
		ValidateOnly:      validateOnly,
		Configs:           map[string]string{},
	}
	if len(rt.ReplicaAssignment) > 0 {
		if rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
			return nil, newTopicError(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		assignment, err := b.checkAssignment(rt.ReplicaAssignment)
		if err != nil {
			return nil, err
		}
		req.Assignment = assignment
	} else {
		if rt.NumPartitions == 0 || rt.NumPartitions < -1 {
			return nil, newTopicError(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
		}
		if rt.NumPartitions > maxPartitionsCap {
			return nil, newTopicError(kerr.InvalidPartitions, "Number of partitions %d exceeds the limit of %d.", rt.NumPartitions, maxPartitionsCap)
		}
		if rt.ReplicationFactor == 0 || rt.ReplicationFactor < -1 {
			return nil, newTopicError(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
		}
		rf := rt.ReplicationFactor
		if rf == -1 {
			rf = b.cfg.DefaultReplicationFactor
		}
		if live := len(b.cluster.liveBrokers()); int(rf) > live {
			return nil, replicationFactorError(rf, live)
		}
	}
	for _, c := range rt.Configs {
		if c.Value == nil {
			return nil, newTopicError(kerr.InvalidConfig, "Null value not supported for topic configs: %s", c.Name)
		}
		req.Configs[c.Name] = *c.Value
	}
	return b.createTopic(req)
}

// checkAssignment checks a manual replica assignment: partitions numbered
// from 0 without gaps, every replica list non-empty, without duplicates,
// naming registered brokers only.
func (b *Broker) checkAssignment(in []kmsg.CreateTopicsRequestTopicReplicaAssignment) (map[int32][]int32, error) {
	out := make(map[int32][]int32, len(in))
	for _, a := range in {
		if _, dup := out[a.Partition]; dup {
			return nil, newTopicError(kerr.InvalidReplicaAssignment, "Partition %d is assigned more than once.", a.Partition)
		}
		out[a.Partition] = a.Replicas
	}
	ids := make([]int, 0, len(out))
	for p := range out {
		ids = append(ids, int(p))
	}
	sort.Ints(ids)
	for i, p := range ids {
		if p != i {
			return nil, newTopicError(kerr.InvalidReplicaAssignment, "Partitions should be a consecutive 0-based integer sequence, but got %v.", ids)
		}
	}
	for _, p := range ids {
		if err := b.checkReplicas(out[int32(p)]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (b *Broker) checkReplicas(replicas []int32) error {
	if len(replicas) == 0 {
		return newTopicError(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
	}
	seen := map[int32]bool{}
	for _, r := range replicas {
		if seen[r] {
			return newTopicError(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", r)
		}
		seen[r] = true
		if !b.brokerRegistered(r) {
			return newTopicError(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no broker with that id is registered.", r)
		}
	}
	return nil
}
