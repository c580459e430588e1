package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/zkbroker"
)

func electRequest(typ int8, topics map[string][]int32) *kmsg.ElectLeadersRequest {
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType = typ
	req.TimeoutMillis = 5000
	if topics != nil {
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for name, ps := range topics {
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = name, ps
			req.Topics = append(req.Topics, rt)
		}
	}
	return req
}

// electCodes flattens a response to "topic/partition" → error name.
func electCodes(resp *kmsg.ElectLeadersResponse) map[TopicPartition]string {
	out := map[TopicPartition]string{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[TopicPartition{t.Topic, p.Partition}] = errName(p.ErrorCode)
		}
	}
	return out
}

// A standalone broker is its own controller and leads every partition, so
// every election is ELECTION_NOT_NEEDED, at every version and type.
func TestElectLeadersStandalone(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "orders", 2, nil)
	for v := int16(0); v <= 2; v++ {
		cl := ab.pinned(t, kmsg.ElectLeaders.Int16(), v)
		types := []int8{electionPreferred}
		if v >= 1 {
			types = append(types, electionUnclean)
		}
		for _, typ := range types {
			resp := request[*kmsg.ElectLeadersResponse](t, cl, electRequest(typ, map[string][]int32{"orders": {0, 1, 7}, "nosuch": {0}}))
			if resp.ErrorCode != 0 {
				t.Fatalf("v%d type %d: top-level %s", v, typ, errName(resp.ErrorCode))
			}
			got := electCodes(resp)
			want := map[TopicPartition]string{
				{"orders", 0}: "ELECTION_NOT_NEEDED",
				{"orders", 1}: "ELECTION_NOT_NEEDED",
				{"orders", 7}: "UNKNOWN_TOPIC_OR_PARTITION",
				{"nosuch", 0}: "UNKNOWN_TOPIC_OR_PARTITION",
			}
			if len(got) != len(want) {
				t.Fatalf("v%d type %d: got %v, want %v", v, typ, got, want)
			}
			for tp, w := range want {
				if got[tp] != w {
					t.Errorf("v%d type %d %v: got %s, want %s", v, typ, tp, got[tp], w)
				}
			}
			for _, rt := range resp.Topics {
				for _, p := range rt.Partitions {
					if p.ErrorMessage == nil || *p.ErrorMessage == "" {
						t.Errorf("v%d %s-%d: no error message", v, rt.Topic, p.Partition)
					}
				}
			}
		}
		// Null topics: every partition, and those needing no election
		// are left out.
		resp := request[*kmsg.ElectLeadersResponse](t, cl, electRequest(electionPreferred, nil))
		if resp.ErrorCode != 0 || len(resp.Topics) != 0 {
			t.Errorf("v%d all partitions: code %s, topics %v", v, errName(resp.ErrorCode), electCodes(resp))
		}
	}

	// An unknown election type is refused as a whole.
	resp := request[*kmsg.ElectLeadersResponse](t, ab.cl, electRequest(5, map[string][]int32{"orders": {0}}))
	if resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("election type 5: %s, want INVALID_REQUEST", errName(resp.ErrorCode))
	}

	// Through kadm, which routes to the controller Metadata names.
	res, err := ab.adm.ElectLeaders(testCtx(t), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 {
		t.Errorf("kadm all partitions: %v", res)
	}
}

// fakeControl is the controller side for cluster-mode handler tests; the
// embedded interface is nil, so a call the test did not expect panics.
type fakeControl struct {
	ClusterControl
	controller bool

	elect    func(unclean bool, tps []TopicPartition) (map[TopicPartition]error, error)
	reassign func(map[TopicPartition][]int32) (map[TopicPartition]error, error)
	list     func([]TopicPartition) (map[TopicPartition]PartitionReassignment, error)
}

func (f *fakeControl) IsController() bool { return f.controller }

func (f *fakeControl) ElectLeaders(ctx context.Context, unclean bool, tps []TopicPartition) (map[TopicPartition]error, error) {
	return f.elect(unclean, tps)
}

func (f *fakeControl) AlterPartitionReassignments(ctx context.Context, m map[TopicPartition][]int32) (map[TopicPartition]error, error) {
	return f.reassign(m)
}

func (f *fakeControl) ListPartitionReassignments(ctx context.Context, tps []TopicPartition) (map[TopicPartition]PartitionReassignment, error) {
	return f.list(tps)
}

// clusterBroker is a Broker in cluster mode with a fake controller side
// and a topic table as UpdateMetadata would have left it; handlers are
// called directly.
func clusterBroker(control ClusterControl, states map[string][]PartitionState) *Broker {
	b := &Broker{
		cfg:     &config.Config{BrokerID: 1},
		cluster: newClusterState(control),
	}
	b.setTopicsLocked(map[string]*Topic{}, map[[16]byte]*Topic{})
	i := byte(0)
	for name, ss := range states {
		i++
		t := &Topic{Name: name, ID: [16]byte{i}, States: ss}
		b.putTopicLocked(t)
	}
	return b
}

// call runs a handler and its second phase, as the protocol server does.
func call(t *testing.T, b *Broker, fn handlerFunc, body kmsg.Request) kmsg.Response {
	t.Helper()
	req := &protocol.Request{Key: body.Key(), Version: body.GetVersion(), Body: body}
	resp := fn(b, context.Background(), req)
	if resp.Wait != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp = resp.Wait(ctx)
	}
	return resp.Msg
}

func TestElectLeadersCluster(t *testing.T) {
	states := map[string][]PartitionState{
		"orders": {
			{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
			{Leader: 1, Replicas: []int32{2, 1}, ISR: []int32{1, 2}},
			{Leader: 3, Replicas: []int32{2, 3}, ISR: []int32{2, 3}},
		},
	}

	t.Run("not controller", func(t *testing.T) {
		b := clusterBroker(&fakeControl{}, states)
		req := electRequest(electionPreferred, nil)
		req.SetVersion(2)
		resp := call(t, b, handleElectLeaders, req).(*kmsg.ElectLeadersResponse)
		got := electCodes(resp)
		if len(got) != 3 {
			t.Fatalf("got %v, want all three partitions", got)
		}
		for tp, code := range got {
			if code != "NOT_CONTROLLER" {
				t.Errorf("%v: %s", tp, code)
			}
		}
	})

	t.Run("controller", func(t *testing.T) {
		f := &fakeControl{controller: true}
		b := clusterBroker(f, states)
		var asked []TopicPartition
		f.elect = func(unclean bool, tps []TopicPartition) (map[TopicPartition]error, error) {
			if unclean {
				t.Error("preferred election asked as unclean")
			}
			asked = tps
			// The controller elected partition 1's preferred leader and
			// announced it; partition 2's election was reported done but
			// never reaches the cache.
			b.mu.Lock()
			tt := *b.topic("orders")
			tt.States = append([]PartitionState(nil), tt.States...)
			tt.States[1].Leader = 2
			b.putTopicLocked(&tt)
			b.mu.Unlock()
			return map[TopicPartition]error{
				{"orders", 0}: kerr.ElectionNotNeeded,
				{"orders", 1}: nil,
				{"orders", 2}: nil,
				{"orders", 9}: kerr.UnknownTopicOrPartition,
			}, nil
		}
		req := electRequest(electionPreferred, nil)
		req.SetVersion(1)
		req.TimeoutMillis = 300
		start := time.Now()
		resp := call(t, b, handleElectLeaders, req).(*kmsg.ElectLeadersResponse)
		if asked != nil {
			t.Errorf("null topics reached the controller as %v", asked)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("answer took %v; the request timeout was 300ms", d)
		}
		got := electCodes(resp)
		want := map[TopicPartition]string{
			{"orders", 1}: "NONE",
			{"orders", 2}: "REQUEST_TIMED_OUT",
			{"orders", 9}: "UNKNOWN_TOPIC_OR_PARTITION",
		}
		if len(got) != len(want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		for tp, w := range want {
			if got[tp] != w {
				t.Errorf("%v: got %s, want %s", tp, got[tp], w)
			}
		}
	})

	t.Run("controller errors", func(t *testing.T) {
		f := &fakeControl{controller: true}
		b := clusterBroker(f, states)
		f.elect = func(bool, []TopicPartition) (map[TopicPartition]error, error) {
			return map[TopicPartition]error{
				{"orders", 2}: &kafkazk.KafkaError{Code: kerr.EligibleLeadersNotAvailable, Message: "no live replica"},
			}, nil
		}
		req := electRequest(electionUnclean, map[string][]int32{"orders": {2}})
		req.SetVersion(2)
		resp := call(t, b, handleElectLeaders, req).(*kmsg.ElectLeadersResponse)
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != kerr.EligibleLeadersNotAvailable.Code || p.ErrorMessage == nil || *p.ErrorMessage != "no live replica" {
			t.Errorf("got %s %v", errName(p.ErrorCode), p.ErrorMessage)
		}

		// The controller moved while the election ran.
		f.elect = func(bool, []TopicPartition) (map[TopicPartition]error, error) {
			return nil, zkbroker.ErrNotConnected
		}
		resp = call(t, b, handleElectLeaders, req).(*kmsg.ElectLeadersResponse)
		if got := electCodes(resp)[TopicPartition{"orders", 2}]; got != "NOT_CONTROLLER" {
			t.Errorf("after controller loss: %s", got)
		}
		f.elect = func(bool, []TopicPartition) (map[TopicPartition]error, error) {
			return nil, errors.New("zk: connection closed")
		}
		resp = call(t, b, handleElectLeaders, req).(*kmsg.ElectLeadersResponse)
		if got := electCodes(resp)[TopicPartition{"orders", 2}]; got != "UNKNOWN_SERVER_ERROR" {
			t.Errorf("after a ZooKeeper error: %s", got)
		}
	})
}
