package fetcher

import (
	"context"
	"log/slog"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

// leaderHandler serves a fakeLeader over kbroker's protocol server, so
// that KgoDialer is tested over a socket: franz-go's ApiVersions
// negotiation, our version cap, and kmsg encoding on both sides.
type leaderHandler struct {
	l        *fakeLeader
	versions map[int16][2]int16

	mu   sync.Mutex
	seen map[int16][]int16 // key → versions received
}

func (h *leaderHandler) Versions(key int16) (int16, int16, bool) {
	v, ok := h.versions[key]
	return v[0], v[1], ok
}

func (h *leaderHandler) Handle(ctx context.Context, req *protocol.Request) protocol.Response {
	h.mu.Lock()
	h.seen[req.Key] = append(h.seen[req.Key], req.Version)
	h.mu.Unlock()
	if req.Key == 18 {
		resp := kmsg.NewPtrApiVersionsResponse()
		if req.RequestedVersion != req.Version {
			// Newer than we serve: a v0 answer with UNSUPPORTED_VERSION
			// and our ranges, so the client retries lower (KIP-511).
			resp.ErrorCode = 35
		}
		for key, v := range h.versions {
			resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: key, MinVersion: v[0], MaxVersion: v[1]})
		}
		return protocol.Response{Msg: resp}
	}
	resp, err := h.l.serve(ctx, int(req.Conn.ID), req.Body)
	if err != nil {
		return protocol.Response{Close: true}
	}
	return protocol.Response{Msg: resp}
}

func (h *leaderHandler) ConnClosed(*protocol.ConnInfo) {}

func (h *leaderHandler) versionsOf(key int16) []int16 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int16(nil), h.seen[key]...)
}

func startLeaderServer(t *testing.T, l *fakeLeader, fetchMax int16) (*leaderHandler, string) {
	t.Helper()
	h := &leaderHandler{l: l, seen: map[int16][]int16{}, versions: map[int16][2]int16{
		18: {0, 3}, 1: {4, fetchMax}, 2: {1, 9}, 23: {2, 4},
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := protocol.NewServer(protocol.ServerConfig{}, h, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln, "REPLICATION") }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		ln.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop")
		}
	})
	return h, ln.Addr().String()
}

// End to end over TCP with franz-go: OffsetForLeaderEpoch truncation, then
// Fetch at our configured version, capped by what the leader serves.
func TestKgoDialerReplicatesOverTCP(t *testing.T) {
	for _, tc := range []struct {
		name      string
		leaderMax int16
		want      int16
	}{{"leader serves more than we ask", 17, 16}, {"leader serves less", 14, 14}} {
		t.Run(tc.name, func(t *testing.T) {
			leaderLog := memLogOf(t, []rec{{0, "m0"}, {1, "m2"}, {1, "m3"}}...)
			leader := newFakeLeader()
			leader.addPartition("orders", 0, leaderLog, 1)
			h, addr := startLeaderServer(t, leader, tc.leaderMax)

			cfg := testConfig()
			m := NewManager(cfg, KgoDialer{}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
			defer m.Close()
			follower := newFakePartition("orders", 0, memLogOf(t, []rec{{0, "m0"}, {0, "m1"}}...), 1, 2)
			m.AddPartitions(BrokerEndpoint{ID: 1, Addr: addr}, follower)
			waitFor(t, 10*time.Second, "catch-up over TCP", caughtUp(leaderLog, follower.log))
			requireSameLog(t, leaderLog, follower.log)

			if v := h.versionsOf(23); len(v) == 0 || v[0] != 4 {
				t.Fatalf("OffsetForLeaderEpoch versions %v, want v4", v)
			}
			for _, v := range h.versionsOf(1) {
				if v != tc.want {
					t.Fatalf("Fetch v%d, want v%d", v, tc.want)
				}
			}
			for _, f := range leader.fetchesOf(follower.tp()) {
				if f.replicaID != 2 {
					t.Fatalf("fetch with replica id %d over the wire, want 2", f.replicaID)
				}
			}
		})
	}
}
