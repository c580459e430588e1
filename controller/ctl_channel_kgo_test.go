package controller

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/metadataversion"
	"github.com/kbroker/kbroker/protocol"
)

// controlPlane is a broker that serves only ApiVersions and the three
// controller requests, recording what it receives.
type controlPlane struct {
	mu   sync.Mutex
	got  []kmsg.Request
	vers map[int16]int16 // key → max version served
}

func (p *controlPlane) Versions(key int16) (int16, int16, bool) {
	max, ok := p.vers[key]
	return 0, max, ok
}

func (p *controlPlane) Handle(_ context.Context, req *protocol.Request) protocol.Response {
	if req.Key == 18 {
		resp := kmsg.NewPtrApiVersionsResponse()
		for k, max := range p.vers {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MaxVersion = k, max
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
		return protocol.Response{Msg: resp}
	}
	p.mu.Lock()
	p.got = append(p.got, req.Body)
	p.mu.Unlock()
	return protocol.Response{Msg: req.Body.ResponseKind()}
}

func (p *controlPlane) ConnClosed(*protocol.ConnInfo) {}

// channelToPlane serves plane on a local port as broker 2 and returns
// controller 1's franz-go channel to it; both end with the test.
func channelToPlane(t *testing.T, plane *controlPlane) *kgoBrokerChannel {
	t.Helper()
	srv := protocol.NewServer(protocol.ServerConfig{}, plane, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, "PLAINTEXT") }()
	ch := newKgoBrokerChannel(1, nil)
	ch.AddBroker(2, ln.Addr().String())
	t.Cleanup(func() {
		ch.close()
		cancel()
		srv.Close()
		<-served
	})
	return ch
}

// The franz-go channel reaches the broker at its registered endpoint and
// delivers controller requests with their fields intact, at the version
// the broker advertises (lowered from ours when it serves less).
func TestKgoBrokerChannel(t *testing.T) {
	plane := &controlPlane{vers: map[int16]int16{18: kmsg.NewPtrApiVersionsRequest().MaxVersion(), 4: 7, 6: 7, 5: 4}}
	ch := channelToPlane(t, plane)
	lai := kmsg.NewPtrLeaderAndISRRequest()
	lai.Version, lai.ControllerID, lai.ControllerEpoch, lai.BrokerEpoch = metadataversion.Latest.LeaderAndIsrVersion(), 1, 3, 42
	ts := kmsg.NewLeaderAndISRRequestTopicState()
	ts.Topic, ts.TopicID = "orders", [16]byte{1}
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Partition, ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas, ps.IsNew = 0, 2, 4, []int32{2, 1}, []int32{2, 1}, true
	ts.PartitionStates = append(ts.PartitionStates, ps)
	lai.TopicStates = append(lai.TopicStates, ts)
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.Version, um.ControllerEpoch = metadataversion.Latest.UpdateMetadataVersion(), 3

	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	for _, req := range []kmsg.Request{lai, um} {
		resp, err := ch.Send(sctx, 2, req)
		if err != nil {
			t.Fatalf("send %s: %v", kmsg.NameForKey(req.Key()), err)
		}
		if resp.Key() != req.Key() {
			t.Fatalf("response key %d for request %d", resp.Key(), req.Key())
		}
	}
	plane.mu.Lock()
	got := plane.got
	plane.mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("broker got %d requests", len(got))
	}
	g := got[0].(*kmsg.LeaderAndISRRequest)
	if g.Version != 7 || g.ControllerEpoch != 3 || g.BrokerEpoch != 42 || g.TopicStates[0].TopicID != ([16]byte{1}) ||
		!g.TopicStates[0].PartitionStates[0].IsNew || g.TopicStates[0].PartitionStates[0].LeaderEpoch != 4 {
		t.Errorf("LeaderAndIsr as received: %+v", g)
	}
	if v := got[1].GetVersion(); v != 7 {
		t.Errorf("UpdateMetadata received at v%d, want v7 (the broker's maximum)", v)
	}
	if _, err := ch.Send(sctx, 9, um); err == nil {
		t.Error("sent to a broker with no endpoint")
	}
	ch.RemoveBroker(2)
	if _, err := ch.Send(sctx, 2, um); err == nil {
		t.Error("sent to a removed broker")
	}
}
