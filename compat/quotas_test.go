package compat

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// quotaRate is the producer and consumer byte-rate quota of the load
// check: 1 MiB/s.
const quotaRate = 1 << 20

// quotaLoad is how long the producer and the consumer run against their
// quotas (the 20 s).
const quotaLoad = 20 * time.Second

// TestClientQuotas sets, describes and deletes client quotas with
// kafka-configs for client ids, users, user/client-id pairs and defaults,
// checks Kafka's errors for bad input, and checks that a producer and a
// consumer (franz-go, at full speed, concurrently under different client
// ids) stay within 20% of their 1 MiB/s quotas over 20 s and see
// throttle_time_ms.
func TestClientQuotas(t *testing.T) {
	b := harness.StartBroker(t)
	configs := func(t *testing.T, args ...string) string {
		t.Helper()
		return tool(t, "kafka-configs", append([]string{"--bootstrap-server", b.Addr}, args...)...)
	}
	configsErr := func(t *testing.T, args ...string) string {
		t.Helper()
		ctx := testCtx(t, time.Minute)
		out, errOut, err := harness.RunTool(t, ctx, "kafka-configs", append([]string{"--bootstrap-server", b.Addr}, args...)...)
		if err == nil {
			t.Fatalf("kafka-configs %s succeeded:\n%s", strings.Join(args, " "), out)
		}
		return out + errOut
	}
	wantIn := func(t *testing.T, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("output lacks %q:\n%s", w, tail(out, 2000))
			}
		}
	}

	// The load's quotas go in first, through kafka-configs.
	configs(t, "--alter", "--add-config", "producer_byte_rate=1048576", "--entity-type", "clients", "--entity-name", "q-producer")
	configs(t, "--alter", "--add-config", "consumer_byte_rate=1048576", "--entity-type", "clients", "--entity-name", "q-consumer")
	createTopic(t, b.Addr, "q-produce", 1, nil)
	createTopic(t, b.Addr, "q-fetch", 1, nil)
	fillForFetch(t, b.Addr, "q-fetch", 2*quotaLoad.Seconds()*quotaRate)

	var wg sync.WaitGroup
	var produced, fetched quotaRun
	wg.Add(2)
	go func() { defer wg.Done(); produced = produceAtFullSpeed(t, b.Addr, "q-producer", "q-produce") }()
	go func() { defer wg.Done(); fetched = consumeAtFullSpeed(t, b.Addr, "q-consumer", "q-fetch") }()

	// The tool checks run meanwhile; none of them touches a level above
	// the load's client-id quotas (a default user's would).
	t.Run("clients", func(t *testing.T) {
		configs(t, "--alter", "--add-config", "producer_byte_rate=2048,request_percentage=25", "--entity-type", "clients", "--entity-name", "tool-client")
		configs(t, "--alter", "--add-config", "consumer_byte_rate=4096", "--entity-type", "clients", "--entity-default")
		// Without a name the tool lists the named entities, not the default.
		out := configs(t, "--describe", "--entity-type", "clients")
		wantIn(t, out, "Quota configs for client-id 'q-producer' are producer_byte_rate=1048576.0",
			"Quota configs for client-id 'tool-client' are producer_byte_rate=2048.0, request_percentage=25.0")
		out = configs(t, "--describe", "--entity-type", "clients", "--entity-default")
		wantIn(t, out, "Quota configs for the default client-id are consumer_byte_rate=4096.0")
		configs(t, "--alter", "--delete-config", "request_percentage", "--entity-type", "clients", "--entity-name", "tool-client")
		out = configs(t, "--describe", "--entity-type", "clients", "--entity-name", "tool-client")
		wantIn(t, out, "Quota configs for client-id 'tool-client' are producer_byte_rate=2048.0")
		if strings.Contains(out, "request_percentage") {
			t.Errorf("request_percentage still described after --delete-config:\n%s", out)
		}
	})
	t.Run("users", func(t *testing.T) {
		configs(t, "--alter", "--add-config", "producer_byte_rate=8192", "--entity-type", "users", "--entity-name", "alice")
		configs(t, "--alter", "--add-config", "consumer_byte_rate=16384", "--entity-type", "users", "--entity-name", "alice",
			"--entity-type", "clients", "--entity-name", "app-1")
		configs(t, "--alter", "--add-config", "request_percentage=12.5", "--entity-type", "users", "--entity-name", "alice",
			"--entity-type", "clients", "--entity-default")
		out := configs(t, "--describe", "--entity-type", "users", "--entity-name", "alice")
		wantIn(t, out, "Quota configs for user-principal 'alice' are producer_byte_rate=8192.0")
		configs(t, "--alter", "--delete-config", "consumer_byte_rate", "--entity-type", "users", "--entity-name", "alice",
			"--entity-type", "clients", "--entity-name", "app-1")
		out = configs(t, "--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-default")
		wantIn(t, out, "Quota configs for user-principal 'alice', the default client-id are request_percentage=12.5")
		out = configs(t, "--describe", "--entity-type", "users", "--entity-type", "clients")
		if strings.Contains(out, "app-1") {
			t.Errorf("alice/app-1 still described after its last quota was deleted:\n%s", out)
		}
	})
	t.Run("bad-input", func(t *testing.T) {
		out := configsErr(t, "--alter", "--add-config", "producer_byte_rat=5", "--entity-type", "clients", "--entity-name", "x")
		wantIn(t, out, "Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: producer_byte_rat")
		out = configsErr(t, "--alter", "--add-config", "producer_byte_rate=-5", "--entity-type", "clients", "--entity-name", "x")
		wantIn(t, out, "org.apache.kafka.common.errors.InvalidRequestException: Quota producer_byte_rate must be greater than 0")
		out = configsErr(t, "--alter", "--add-config", "consumer_byte_rate=1.5", "--entity-type", "users", "--entity-name", "x")
		wantIn(t, out, "org.apache.kafka.common.errors.InvalidRequestException: Configuration consumer_byte_rate must be a LONG value")
	})

	wg.Wait()
	for _, r := range []struct {
		what string
		run  quotaRun
	}{{"producer", produced}, {"consumer", fetched}} {
		rate := float64(r.run.bytes) / r.run.elapsed.Seconds()
		t.Logf("%s: %d bytes in %v = %.0f B/s (quota %d), %d throttles seen", r.what, r.run.bytes, r.run.elapsed, rate, quotaRate, r.run.throttles)
		if rate > 1.2*quotaRate || rate < 0.8*quotaRate {
			t.Errorf("%s ran at %.0f B/s, want within 20%% of %d", r.what, rate, quotaRate)
		}
		if r.run.throttles == 0 {
			t.Errorf("%s saw no throttle_time_ms", r.what)
		}
	}

	// A default user quota outranks every client-id quota (the 8-level
	// precedence): set after the load, which it would have changed.
	t.Run("user-default", func(t *testing.T) {
		configs(t, "--alter", "--add-config", "request_percentage=200", "--entity-type", "users", "--entity-default")
		out := configs(t, "--describe", "--entity-type", "users", "--entity-default")
		wantIn(t, out, "Quota configs for the default user-principal are request_percentage=200.0")
		configs(t, "--alter", "--delete-config", "request_percentage", "--entity-type", "users", "--entity-default")
	})
}

// quotaRun is what a client got through in its run.
type quotaRun struct {
	bytes     int64
	elapsed   time.Duration
	throttles int64
}

// throttleHook counts the throttles the broker reports (franz-go's
// HookBrokerThrottle fires for a response with throttle_time_ms > 0).
type throttleHook struct{ n *atomic.Int64 }

func (h throttleHook) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
	}
}

// quotaValueSize is each record's value: random bytes, so that what the
// quota counts (the bytes on the wire) is what the test counts.
const quotaValueSize = 16 << 10

// quotaRequestBytes bounds each produce and fetch of the load: Kafka's
// window lets a client burst quota * (quota.window.num - 1) windows at
// first and again when that burst leaves the samples; small requests keep
// the rest of the run smooth, as a steady client's are (docs/quotas.md).
const quotaRequestBytes = 64 << 10

func randomValue() []byte {
	v := make([]byte, quotaValueSize)
	rand.Read(v)
	return v
}

// fillForFetch writes at least n bytes of values to topic, unthrottled.
func fillForFetch(t *testing.T, addr, topic string, n float64) {
	t.Helper()
	cl := newClient(t, addr, kgo.ClientID("q-filler"), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := testCtx(t, time.Minute)
	value := randomValue()
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for sent := 0.0; sent < n; sent += quotaValueSize {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				firstErr.CompareAndSwap(nil, err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		t.Fatalf("filling %s: %v", topic, err)
	}
}

// produceAtFullSpeed produces as fast as the broker lets it for
// quotaLoad and counts the value bytes acknowledged within it.
func produceAtFullSpeed(t *testing.T, addr, clientID, topic string) quotaRun {
	var throttles, acked atomic.Int64
	cl := newClient(t, addr, kgo.ClientID(clientID), kgo.ProducerBatchMaxBytes(quotaRequestBytes),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedRecords(64), kgo.WithHooks(throttleHook{&throttles}))
	ctx, cancel := context.WithTimeout(context.Background(), quotaLoad)
	defer cancel()
	value := randomValue()
	start := time.Now()
	for ctx.Err() == nil {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
			if err == nil && time.Since(start) <= quotaLoad {
				acked.Add(int64(len(r.Value)))
			}
		})
	}
	elapsed := time.Since(start)
	return quotaRun{bytes: acked.Load(), elapsed: elapsed, throttles: throttles.Load()}
}

// consumeAtFullSpeed reads topic from the start for quotaLoad and counts
// the value bytes fetched.
func consumeAtFullSpeed(t *testing.T, addr, clientID, topic string) quotaRun {
	var throttles atomic.Int64
	cl := newClient(t, addr, kgo.ClientID(clientID), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(quotaRequestBytes),
		kgo.FetchMaxPartitionBytes(quotaRequestBytes), kgo.WithHooks(throttleHook{&throttles}))
	ctx, cancel := context.WithTimeout(context.Background(), quotaLoad)
	defer cancel()
	var n int64
	start := time.Now()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { n += int64(len(r.Value)) })
	}
	return quotaRun{bytes: n, elapsed: time.Since(start), throttles: throttles.Load()}
}
