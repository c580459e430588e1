package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDeleteTopicsByNameAndID(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "gone-by-name", 2, nil)
	ab.createTopic(t, "gone-by-id", 1, nil)
	id := ab.b.topic("gone-by-id").ID
	nameID := ab.b.topic("gone-by-name").ID

	req := kmsg.NewPtrDeleteTopicsRequest()
	for _, e := range []struct {
		name *string
		id   [16]byte
	}{{strp("gone-by-name"), [16]byte{}}, {nil, id}, {strp("never-was"), [16]byte{}}, {nil, [16]byte{9}}, {strp("other"), id}} {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic, rt.TopicID = e.name, e.id
		req.Topics = append(req.Topics, rt)
	}
	resp := request[*kmsg.DeleteTopicsResponse](t, ab.cl, req)
	if resp.Version != 6 || len(resp.Topics) != 5 {
		t.Fatalf("v%d, %d answers", resp.Version, len(resp.Topics))
	}
	if r := resp.Topics[0]; r.ErrorCode != 0 || r.TopicID != nameID {
		t.Fatalf("by name: %s id %x", errName(r.ErrorCode), r.TopicID)
	}
	if r := resp.Topics[1]; r.ErrorCode != 0 || r.Topic == nil || *r.Topic != "gone-by-id" {
		t.Fatalf("by id: %s %v", errName(r.ErrorCode), r.Topic)
	}
	if r := resp.Topics[2]; r.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("unknown name: %s", errName(r.ErrorCode))
	}
	if r := resp.Topics[3]; r.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown id: %s", errName(r.ErrorCode))
	}
	if r := resp.Topics[4]; r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("name and id: %s", errName(r.ErrorCode))
	}
	req.Topics = []kmsg.DeleteTopicsRequestTopic{kmsg.NewDeleteTopicsRequestTopic()}
	if r := request[*kmsg.DeleteTopicsResponse](t, ab.cl, req).Topics[0]; r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("neither name nor id: %s", errName(r.ErrorCode))
	}
	if ab.b.topic("gone-by-name") != nil || ab.b.topic("gone-by-id") != nil {
		t.Fatal("topics still in the table")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(ab.dir, "logs", "gone-by-id-0"))
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partition dir still there: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	md := request[*kmsg.MetadataResponse](t, ab.cl, metadataRequest("gone-by-name"))
	if c := md.Topics[0].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("metadata after delete: %s", errName(c))
	}
	// The name is free again.
	ab.createTopic(t, "gone-by-name", 1, nil)
	if ab.b.topic("gone-by-name").ID == nameID {
		t.Fatal("a re-created topic kept the old id")
	}
}

func TestDeleteTopicsOldVersionAndDisabled(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "v1-del", 1, nil)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{"v1-del", "missing"}
	resp := request[*kmsg.DeleteTopicsResponse](t, ab.pinned(t, kmsg.DeleteTopics.Int16(), 1), req)
	if resp.Version != 1 || resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("v%d: %+v", resp.Version, resp.Topics)
	}

	off := startAdminBroker(t, "delete.topic.enable=false")
	off.createTopic(t, "kept", 1, nil)
	res, err := off.adm.DeleteTopics(testCtx(t), "kept")
	if err != nil {
		t.Fatal(err)
	}
	if r := res["kept"]; r.Err != kerr.TopicDeletionDisabled {
		t.Fatalf("delete.topic.enable=false: %v", r.Err)
	}
	if off.b.topic("kept") == nil {
		t.Fatal("topic deleted although deletion is disabled")
	}
}
