package server

import (
	"errors"
	"fmt"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// authorizedOperationsNotRequested is the bitfield's value when the
// request did not ask for it (the schema's default, Integer.MIN_VALUE).
const authorizedOperationsNotRequested = -2147483648

// topicNameProblem returns Kafka's InvalidTopicException message for an
// illegal name (Topic.validate), or "" for a legal one.
func topicNameProblem(name string) string {
	var ke *kafkazk.KafkaError
	if err := kafkazk.ValidateTopicName(name); errors.As(err, &ke) {
		return ke.Message
	} else if err != nil {
		return err.Error()
	}
	return ""
}

// topicError is a per-topic admin failure: a Kafka error code and the
// message CreateTopics/DeleteTopics/CreatePartitions carry since their
// versions with ErrorMessage.
type topicError struct {
	code int16
	msg  string
}

func (e *topicError) Error() string { return e.msg }

func newTopicError(err *kerr.Error, format string, args ...any) *topicError {
	return &topicError{code: err.Code, msg: fmt.Sprintf(format, args...)}
}

// adminError turns an error from the topic table into a code and message.
// A configError keeps its validation text; other Kafka errors get the
// message Kafka's controller would write.
func adminError(err error, topic string) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	var te *topicError
	if errors.As(err, &te) {
		return te.code, &te.msg
	}
	var ce *configError
	if errors.As(err, &ce) {
		msg := ce.Error()
		return kerr.InvalidConfig.Code, &msg
	}
	code := errCode(err)
	var msg string
	switch code {
	case kerr.TopicAlreadyExists.Code:
		msg = fmt.Sprintf("Topic '%s' already exists.", topic)
	case kerr.UnknownTopicOrPartition.Code:
		msg = "This server does not host this topic-partition."
	case kerr.InvalidTopicException.Code:
		if msg = topicNameProblem(topic); msg == "" {
			msg = fmt.Sprintf("Topic '%s' collides with an existing topic (topic names may not differ only by '.' and '_').", topic)
		}
	case kerr.InvalidReplicaAssignment.Code:
		msg = "The manual partition assignment includes a broker that is not registered, an empty or a duplicate replica list."
	case kerr.UnknownServerError.Code:
		msg = err.Error()
	default:
		if ke := kerr.ErrorForCode(code); ke != nil {
			msg = ke.Error()
		}
	}
	return code, &msg
}

// replicationFactorError is Kafka's message when a factor cannot be
// placed on the registered brokers (ReplicationControlManager).
func replicationFactorError(rf int16, brokers int) *topicError {
	return newTopicError(kerr.InvalidReplicationFactor,
		"Unable to replicate the partition %d time(s): The target replication factor of %d cannot be reached because only %d broker(s) are registered.", rf, rf, brokers)
}

// autoCreateTopic creates a topic a client named in Metadata with the
// broker defaults; __consumer_offsets and __transaction_state get their
// coordinator's settings, as their first FindCoordinator would.
func (b *Broker) autoCreateTopic(name string) error {
	switch name {
	case offsetsTopic:
		return b.ensureOffsetsTopic()
	case txnTopic:
		return b.ensureTxnTopic()
	}
	_, err := b.createTopic(CreateTopicRequest{Name: name, NumPartitions: -1, ReplicationFactor: -1, Auto: true})
	return err
}

// metadataTopic describes a topic the way Metadata reports it: every
// partition led by this broker, which is also the only replica and the ISR.
func (b *Broker) metadataTopic(t *Topic) kmsg.MetadataResponseTopic {
	rt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	rt.Topic = &name
	rt.TopicID = t.ID
	rt.IsInternal = t.Internal
	rt.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, len(t.Partitions))
	for i, s := range t.States {
		rp := kmsg.NewMetadataResponseTopicPartition()
		rp.Partition = int32(i)
		rp.Leader, rp.LeaderEpoch = s.Leader, s.LeaderEpoch
		rp.Replicas, rp.ISR, rp.OfflineReplicas = s.Replicas, s.ISR, s.Offline
		if s.Leader == b.cfg.BrokerID && t.leadershipSuspended(int32(i)) {
			// Most likely led elsewhere by now: clients ask another
			// broker (server/cluster_deposed_leader.go).
			rp.Leader = -1
		}
		if rp.Leader < 0 {
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// isInternalTopic reports Kafka's internal topics by name, for topics that
// may not exist yet.
func isInternalTopic(name string) bool {
	return name == offsetsTopic || name == txnTopic
}

// nullableString returns a pointer to s, for kmsg's nullable strings.
func nullableString(s string) *string { return &s }
