package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kbroker/kbroker/config"
)

// adminBroker is a real Broker serving on a loopback port, for tests that
// drive the admin APIs through franz-go over TCP.
type adminBroker struct {
	b    *Broker
	addr string
	dir  string
	cl   *kgo.Client
	adm  *kadm.Client
}

// startAdminBroker starts a broker whose server.properties holds the given
// extra lines on top of a loopback listener and a temp log dir. The broker
// and its clients stop when the test ends.
func startAdminBroker(t *testing.T, extra ...string) *adminBroker {
	t.Helper()
	dir := t.TempDir()
	props := []string{
		"broker.id=0",
		"listeners=PLAINTEXT://127.0.0.1:0",
		"log.dirs=" + filepath.Join(dir, "logs"),
		"offsets.topic.num.partitions=3",
		"group.initial.rebalance.delay.ms=0",
	}
	props = append(props, extra...)
	path := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(path, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := New(cfg, nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	ab := &adminBroker{b: b, dir: dir}
	t.Cleanup(func() {
		if ab.cl != nil {
			ab.cl.Close()
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("broker run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("broker did not stop within 10s")
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for ab.addr = b.Addr(); ab.addr == ""; ab.addr = b.Addr() {
		if time.Now().After(deadline) {
			t.Fatal("broker did not listen within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ab.cl = ab.client(t)
	ab.adm = kadm.NewClient(ab.cl)
	return ab
}

// client returns a client for the broker; opts may pin versions.
func (ab *adminBroker) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	opts = append([]kgo.Opt{kgo.SeedBrokers(ab.addr), kgo.RequestRetries(0)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// pinned returns a client that speaks at most version v of API key.
func (ab *adminBroker) pinned(t *testing.T, key, v int16) *kgo.Client {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(key, v)
	cl := ab.client(t, kgo.MaxVersions(vs))
	t.Cleanup(cl.Close)
	return cl
}

// request sends req on cl and fails the test on a transport error.
func request[R kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The seed broker is the only one, and asking it directly keeps kgo
	// from routing BROKER config resources by their (possibly bogus) name.
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("%T: %v", req, err)
	}
	r, ok := resp.(R)
	if !ok {
		t.Fatalf("response %T", resp)
	}
	return r
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// createTopic creates a topic through CreateTopics and fails on any error.
func (ab *adminBroker) createTopic(t *testing.T, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := ab.adm.CreateTopic(testCtx(t), partitions, -1, configs, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", name, err, resp.Err)
	}
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		return ke.Message
	}
	return fmt.Sprint(code)
}

func strp(s string) *string { return &s }
