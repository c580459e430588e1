package server

// ElectLeaders, versions 0-2 (KIP-183, KIP-460: v1 adds the election type
// and a top-level error code). kafka-leader-election sends it to the
// controller.
//
// Cluster mode: the controller runs the elections, then — like Kafka's
// DelayedElectLeader — the answer waits until this broker's metadata cache
// shows the elected leaders, for at most the request's timeout
// (REQUEST_TIMED_OUT for the partitions still waiting). Other brokers
// answer NOT_CONTROLLER for every partition, as a ZooKeeper-mode broker
// does. Standalone, the broker is its own controller with one live
// broker: a partition it leads needs no election.
//
// With null topics (all partitions) the partitions that needed no election
// are left out of the answer, as Kafka does.

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/zkbroker"
)

func init() { register(kmsg.ElectLeaders.Int16(), 0, 2, handleElectLeaders) }

// Election types on the wire (KIP-460).
const (
	electionPreferred int8 = 0
	electionUnclean   int8 = 1
)

func handleElectLeaders(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.ElectLeadersRequest)
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := electionPreferred
	if req.Version >= 1 {
		typ = r.ElectionType
	}
	var partitions []TopicPartition
	if r.Topics != nil {
		partitions = []TopicPartition{}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				partitions = append(partitions, TopicPartition{t.Topic, p})
			}
		}
	}
	all := r.Topics == nil
	if typ != electionPreferred && typ != electionUnclean {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return protocol.Response{Msg: resp}
	}
	unclean := typ == electionUnclean
	switch {
	case !b.authorizeCluster(req, kmsg.ACLOperationAlter):
		// Kafka's handleElectLeaders: the named partitions fail, without
		// a message; an election of all partitions names none, so that
		// the answer does not list the cluster's topics.
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for _, tp := range sortedPartitions(b.electionResults(partitions, false, func(TopicPartition) error { return nil })) {
			if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.Topic {
				rt := kmsg.NewElectLeadersResponseTopic()
				rt.Topic = tp.Topic
				resp.Topics = append(resp.Topics, rt)
			}
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = tp.Partition, kerr.ClusterAuthorizationFailed.Code
			rt := &resp.Topics[len(resp.Topics)-1]
			rt.Partitions = append(rt.Partitions, rp)
		}
		return protocol.Response{Msg: resp}
	case !b.cluster.control.IsController():
		fillElectLeaders(resp, b.electionResults(partitions, all, func(TopicPartition) error { return kerr.NotController }), all)
		return protocol.Response{Msg: resp}
	}
	timeout := requestTimeout(r.TimeoutMillis)
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		results, err := b.cluster.control.ElectLeaders(ctx, unclean, partitions)
		if err != nil {
			// The controller resigned or timed out before answering:
			// every named partition carries that error.
			err = controllerCallError(err)
			results = b.electionResults(partitions, all, func(TopicPartition) error { return err })
		} else {
			b.awaitElectedLeaders(ctx, unclean, results)
		}
		fillElectLeaders(resp, results, all)
		return protocol.Response{Msg: resp}
	}}
}

// electionResults gives each named partition, or every partition for null
// topics, the outcome decide returns.
func (b *Broker) electionResults(partitions []TopicPartition, all bool, decide func(TopicPartition) error) map[TopicPartition]error {
	if all {
		partitions = b.allTopicPartitions()
	}
	results := make(map[TopicPartition]error, len(partitions))
	for _, tp := range partitions {
		results[tp] = decide(tp)
	}
	return results
}

// requestTimeout is a request's TimeoutMillis, bounded so that a zero or
// absurd value neither answers at once nor holds the connection forever.
func requestTimeout(ms int32) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	if d <= 0 || d > clusterAdminTimeout {
		return clusterAdminTimeout
	}
	return d
}

// controllerCallError is the Kafka error for a failed call into the
// controller: it stopped being the controller, or the request's time ran
// out.
func controllerCallError(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut
	case errors.Is(err, zkbroker.ErrNotConnected):
		return kerr.NotController
	}
	return err
}

// awaitElectedLeaders waits until the metadata cache shows the leader each
// successful election chose (the controller's UpdateMetadata reaches this
// broker too); partitions still waiting when ctx ends become
// REQUEST_TIMED_OUT.
func (b *Broker) awaitElectedLeaders(ctx context.Context, unclean bool, results map[TopicPartition]error) {
	for {
		waiting := 0
		for tp, err := range results {
			if err == nil && !b.electedLeaderVisible(unclean, tp) {
				waiting++
			}
		}
		if waiting == 0 {
			return
		}
		select {
		case <-ctx.Done():
			for tp, err := range results {
				if err == nil && !b.electedLeaderVisible(unclean, tp) {
					results[tp] = kerr.RequestTimedOut
				}
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// electedLeaderVisible: a preferred election is visible once the preferred
// replica leads, an unclean one once there is any leader.
func (b *Broker) electedLeaderVisible(unclean bool, tp TopicPartition) bool {
	st, ok := b.partitionState(tp)
	if !ok {
		return false
	}
	if unclean {
		return st.Leader >= 0
	}
	return len(st.Replicas) > 0 && st.Leader == st.Replicas[0]
}

func (b *Broker) partitionState(tp TopicPartition) (PartitionState, bool) {
	return b.topic(tp.Topic).state(tp.Partition)
}

// allTopicPartitions lists every partition the topic table knows (the
// metadata cache in cluster mode), as Kafka does for null topics.
func (b *Broker) allTopicPartitions() []TopicPartition {
	var out []TopicPartition
	for _, t := range b.sortedTopics() {
		for p := range t.States {
			out = append(out, TopicPartition{t.Name, int32(p)})
		}
	}
	return out
}

// fillElectLeaders writes results grouped by topic, in name and partition
// order. With all set, ELECTION_NOT_NEEDED results are dropped.
func fillElectLeaders(resp *kmsg.ElectLeadersResponse, results map[TopicPartition]error, all bool) {
	for _, tp := range sortedPartitions(results) {
		err := results[tp]
		if all && errors.Is(err, kerr.ElectionNotNeeded) {
			continue
		}
		if n := len(resp.Topics); n == 0 || resp.Topics[n-1].Topic != tp.Topic {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = tp.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition = tp.Partition
		rp.ErrorCode, rp.ErrorMessage = apiError(err)
		rt := &resp.Topics[len(resp.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
}

func sortedPartitions[V any](m map[TopicPartition]V) []TopicPartition {
	out := make([]TopicPartition, 0, len(m))
	for tp := range m {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// apiError is Kafka's ApiError on the wire: the code, and the message the
// error carries, else the code's default message. NOT_CONTROLLER goes
// without one, as Kafka's controller sends it.
func apiError(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	var te *topicError
	if errors.As(err, &te) {
		return te.code, &te.msg
	}
	var ce *kafkazk.KafkaError
	if errors.As(err, &ce) {
		return ce.Code.Code, &ce.Message
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		if ke == kerr.NotController {
			return ke.Code, nil
		}
		return ke.Code, &ke.Description
	}
	msg := err.Error()
	return kerr.UnknownServerError.Code, &msg
}
