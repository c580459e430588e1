package protocol

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A real client opens with ApiVersions at its newest version, which is above
// the fake's max of 3: it must get the v0 UNSUPPORTED_VERSION answer, retry
// at v3, and then talk to us normally.
func TestFranzGoClient(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newFakeHandler()
	ts := startServer(t, ServerConfig{Registerer: reg}, h)
	cl, err := kgo.NewClient(kgo.SeedBrokers(ts.addr), kgo.ClientID("kgo-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	resp, err := cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		t.Fatal(err)
	}
	if av := resp.(*kmsg.ApiVersionsResponse); av.ErrorCode != 0 || len(av.ApiKeys) != 3 {
		t.Fatalf("ApiVersions: error %d, %d keys", av.ErrorCode, len(av.ApiKeys))
	}
	var sawKIP511 bool
	for _, r := range h.seenRequests() {
		if r.Key == apiVersionsKey && r.RequestedVersion > 3 && r.Version == 0 {
			sawKIP511 = true
		}
		if r.ClientID == nil || *r.ClientID != "kgo-test" {
			t.Fatalf("client id %v", r.ClientID)
		}
	}
	if !sawKIP511 {
		t.Fatal("the client never asked for an ApiVersions version above our max")
	}

	n := len(h.seenRequests())
	// Booked once each response left, which may be just after the client
	// read it.
	var got uint64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		got = 0
		if st := ts.srv.metrics.requests.byName[apiVersionsKey].Load(); st != nil {
			for v := range st.versions {
				got += st.versions[v].Load()
			}
		}
		if got == uint64(n) || time.Now().After(deadline) {
			break
		}
	}
	if got != uint64(n) {
		t.Fatalf("requests_total{request=ApiVersions} = %v, want %d", got, n)
	}
	in := counterValue(t, ts.srv.metrics.bytesIn.WithLabelValues("PLAINTEXT"))
	out := counterValue(t, ts.srv.metrics.bytesOut.WithLabelValues("PLAINTEXT"))
	var wantIn int
	for _, r := range h.seenRequests() {
		wantIn += 4 + r.Size
	}
	if in != float64(wantIn) || out <= 0 {
		t.Fatalf("bytes in %v (want %d), out %v", in, wantIn, out)
	}
	// A second server on the same registry shares the counters.
	if s2 := NewServer(ServerConfig{Registerer: reg}, h, nil); s2.metrics == nil {
		t.Fatal("second server lost its metrics")
	} else {
		s2.Close()
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
