package server

// DeleteTopics, versions 1-6 (v6 names topics by name or by id).
//
// A topic's partitions and data go at once; there is no pending-deletion
// state to report. delete.topic.enable=false answers
// TOPIC_DELETION_DISABLED; an entry listed twice, or naming both a topic
// and an id, is INVALID_REQUEST like in Kafka's controller.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DeleteTopics.Int16(), 1, 6, handleDeleteTopics) }

func handleDeleteTopics(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DeleteTopicsRequest)
	resp := kmsg.NewPtrDeleteTopicsResponse()
	resp.SetVersion(req.Version)

	entries := r.Topics
	if req.Version < 6 {
		entries = make([]kmsg.DeleteTopicsRequestTopic, 0, len(r.TopicNames))
		for _, n := range r.TopicNames {
			e := kmsg.NewDeleteTopicsRequestTopic()
			e.Topic = nullableString(n)
			entries = append(entries, e)
		}
	}
	names, ids := map[string]int{}, map[[16]byte]int{}
	for _, e := range entries {
		if e.Topic != nil {
			names[*e.Topic]++
		} else {
			ids[e.TopicID]++
		}
	}
	for _, e := range entries {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic, st.TopicID = e.Topic, e.TopicID
		err := b.deleteTopicEntry(req, e, names, ids, &st)
		switch {
		case errors.Is(err, errDeleteTopicDenied):
			st.ErrorCode = errDeleteTopicDenied.Code
		case err != nil:
			st.ErrorCode, st.ErrorMessage = adminError(err, stringOr(st.Topic))
		}
		resp.Topics = append(resp.Topics, st)
	}
	return protocol.Response{Msg: resp}
}

// deleteTopicEntry deletes one entry, filling in the name or id it did not
// carry.
func (b *Broker) deleteTopicEntry(req *protocol.Request, e kmsg.DeleteTopicsRequestTopic, names map[string]int, ids map[[16]byte]int, st *kmsg.DeleteTopicsResponseTopic) error {
	var zero [16]byte
	if e.Topic != nil && e.TopicID != zero {
		return newTopicError(kerr.InvalidRequest, "You may not specify both topic name and topic id.")
	}
	if e.Topic == nil && e.TopicID == zero {
		return newTopicError(kerr.InvalidRequest, "Neither topic name nor id were specified.")
	}
	if e.Topic != nil && names[*e.Topic] > 1 {
		return newTopicError(kerr.InvalidRequest, "Duplicate topic name.")
	}
	if e.Topic == nil && ids[e.TopicID] > 1 {
		return newTopicError(kerr.InvalidRequest, "Duplicate topic id.")
	}
	if !b.cfg.DeleteTopicEnable {
		return newTopicError(kerr.TopicDeletionDisabled, "Topic deletion is disabled.")
	}
	// Kafka: DELETE on the topic; an unknown topic the principal may not
	// see is not told apart from a known one. Kafka's answer to a denial
	// has no message.
	if e.Topic != nil && !b.topicAllowed(req, kmsg.ACLOperationDelete, *e.Topic) {
		return errDeleteTopicDenied
	}
	var t *Topic
	if e.Topic != nil {
		t = b.topic(*e.Topic)
		if t == nil {
			return newTopicError(kerr.UnknownTopicOrPartition, "This server does not host this topic-partition.")
		}
	} else {
		t = b.topicByID(e.TopicID)
		if t == nil {
			return newTopicError(kerr.UnknownTopicID, "This server does not host this topic ID.")
		}
	}
	if e.Topic == nil {
		// By id, the name only to a principal that may describe the
		// topic; the id itself is no secret.
		if !b.topicAllowed(req, kmsg.ACLOperationDescribe, t.Name) {
			return errDeleteTopicDenied
		}
		st.Topic = nullableString(t.Name)
		if !b.topicAllowed(req, kmsg.ACLOperationDelete, t.Name) {
			return errDeleteTopicDenied
		}
	}
	st.Topic, st.TopicID = nullableString(t.Name), t.ID
	return b.deleteTopic(t.Name)
}

// errDeleteTopicDenied is a DeleteTopics denial: the code alone.
var errDeleteTopicDenied = kerr.TopicAuthorizationFailed

func stringOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
