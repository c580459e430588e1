package server

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeTopicPartitions(t *testing.T, ab *adminBroker, limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	req.ResponsePartitionLimit = limit
	req.Cursor = cursor
	for _, n := range topics {
		rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		rt.Topic = n
		req.Topics = append(req.Topics, rt)
	}
	return request[*kmsg.DescribeTopicPartitionsResponse](t, ab.cl, req)
}

// shape lists each answered topic with its partitions, for comparing pages.
func shape(resp *kmsg.DescribeTopicPartitionsResponse) map[string][]int32 {
	out := map[string][]int32{}
	for _, tp := range resp.Topics {
		ps := []int32{}
		for _, p := range tp.Partitions {
			ps = append(ps, p.Partition)
		}
		out[*tp.Topic] = ps
	}
	return out
}

func TestDescribeTopicPartitionsPages(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "t1", 3, nil)
	ab.createTopic(t, "t2", 2, nil)
	ab.createTopic(t, "t3", 1, nil)

	resp := describeTopicPartitions(t, ab, 2000, nil)
	if len(resp.Topics) != 3 || resp.NextCursor != nil {
		t.Fatalf("all topics: %v, cursor %v", shape(resp), resp.NextCursor)
	}
	first := resp.Topics[0]
	if *first.Topic != "t1" || first.TopicID != ab.b.topic("t1").ID || first.ErrorCode != 0 || first.AuthorizedOperations != topicAuthorizedOperations {
		t.Fatalf("t1: %+v", first)
	}
	p := first.Partitions[0]
	if p.LeaderID != 0 || p.LeaderEpoch != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 || p.EligibleLeaderReplicas == nil || len(p.OfflineReplicas) != 0 {
		t.Fatalf("partition %+v", p)
	}

	// Pages of 2 partitions walk every partition exactly once.
	var pages []map[string][]int32
	var cursor *kmsg.DescribeTopicPartitionsRequestCursor
	for i := 0; i < 10; i++ {
		resp := describeTopicPartitions(t, ab, 2, cursor)
		pages = append(pages, shape(resp))
		if resp.NextCursor == nil {
			break
		}
		cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: resp.NextCursor.Topic, Partition: resp.NextCursor.Partition}
	}
	want := []map[string][]int32{
		{"t1": {0, 1}},
		{"t1": {2}, "t2": {0}},
		{"t2": {1}, "t3": {0}},
	}
	if len(pages) != len(want) {
		t.Fatalf("pages %v, want %v", pages, want)
	}
	for i := range want {
		if len(pages[i]) != len(want[i]) {
			t.Fatalf("page %d: %v, want %v", i, pages[i], want[i])
		}
		for k, v := range want[i] {
			if len(pages[i][k]) != len(v) {
				t.Fatalf("page %d: %v, want %v", i, pages[i], want[i])
			}
			for j := range v {
				if pages[i][k][j] != v[j] {
					t.Fatalf("page %d: %v, want %v", i, pages[i], want[i])
				}
			}
		}
	}

	// A page that ends exactly at a topic's end points at the next topic.
	resp = describeTopicPartitions(t, ab, 3, nil)
	if resp.NextCursor == nil || resp.NextCursor.Topic != "t2" || resp.NextCursor.Partition != 0 {
		t.Fatalf("cursor %+v", resp.NextCursor)
	}
}

func TestDescribeTopicPartitionsNamedTopics(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "named", 2, nil)
	resp := describeTopicPartitions(t, ab, 2000, nil, "zzz-missing", "named")
	if len(resp.Topics) != 2 || *resp.Topics[0].Topic != "named" || *resp.Topics[1].Topic != "zzz-missing" {
		t.Fatalf("%v", shape(resp))
	}
	if c := resp.Topics[1].ErrorCode; c != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("missing: %s", errName(c))
	}
	resp = describeTopicPartitions(t, ab, 2000, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "other"}, "named")
	if resp.Topics[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("cursor outside the list: %s", errName(resp.Topics[0].ErrorCode))
	}
	resp = describeTopicPartitions(t, ab, 2000, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "named", Partition: 1}, "named")
	if s := shape(resp); len(s["named"]) != 1 || s["named"][0] != 1 {
		t.Fatalf("from cursor: %v", s)
	}
}
