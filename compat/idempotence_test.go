package compat

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// TestIdempotentProducerThroughCuts sends 100,000 records with the Java
// idempotent producer (enable.idempotence=true, acks=all) through a proxy
// that cuts every connection every few hundred milliseconds. Retries after
// a cut resend batches the broker may already have appended; the broker's
// producer-state deduplication must make every value land exactly once, in
// order within its partition.
func TestIdempotentProducerThroughCuts(t *testing.T) {
	proxy := harness.NewProxy(t, "")
	b := harness.StartBroker(t, "advertised.listeners=PLAINTEXT://"+proxy.Addr)
	proxy.SetTarget(b.Addr)
	const topic, n = "idempotent", 100000
	createTopic(t, b.Addr, topic, 3, nil)

	cfg := filepath.Join(t.TempDir(), "producer.properties")
	if err := os.WriteFile(cfg, []byte(strings.Join([]string{
		"enable.idempotence=true",
		"acks=all",
		// VerifiableProducer defaults retries to 0, which idempotence rejects.
		"retries=2147483647",
		"max.in.flight.requests.per.connection=5",
		"delivery.timeout.ms=240000",
		"request.timeout.ms=10000",
		"reconnect.backoff.ms=20",
		"reconnect.backoff.max.ms=200",
		"linger.ms=5",
	}, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	stopCuts := make(chan struct{})
	var cutsWG sync.WaitGroup
	cutsWG.Add(1)
	go func() {
		defer cutsWG.Done()
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopCuts:
				return
			case <-tick.C:
				proxy.CutAll()
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errOut, err := harness.RunTool(t, ctx, "kafka-verifiable-producer", "--bootstrap-server", proxy.Addr,
		"--topic", topic, "--max-messages", strconv.Itoa(n), "--throughput", "-1", "--acks", "-1",
		"--producer.config", cfg)
	close(stopCuts)
	cutsWG.Wait()
	t.Logf("proxy cut all connections %d times; %d connections proxied", proxy.Cuts(), proxy.Accepted())
	if err != nil {
		t.Fatalf("kafka-verifiable-producer: %v\n%s", err, tail(errOut, 4000))
	}
	acked, sendErrors := verifiableProducerAcks(t, out)
	if sendErrors > 0 || acked != n {
		t.Fatalf("verifiable producer: %d acked, %d send errors; want %d acked, 0 errors", acked, sendErrors, n)
	}
	// Each cut forces the producer to reconnect through the proxy; fewer
	// connections than that means it bypassed the proxy (advertised
	// listener ignored) and the test exercised nothing.
	if proxy.Cuts() < 3 || proxy.Accepted() < proxy.Cuts()/2 {
		t.Errorf("%d cuts and %d proxied connections while producing; the test did not exercise retries",
			proxy.Cuts(), proxy.Accepted())
	}

	recs := consumeN(t, b.Addr, topic, n, 2*time.Minute)
	seen := make([]bool, n)
	last := map[int32]int{}
	for _, r := range recs {
		v, err := strconv.Atoi(string(r.Value))
		if err != nil || v < 0 || v >= n {
			t.Fatalf("unexpected value %q at %d@%d", r.Value, r.Partition, r.Offset)
		}
		if seen[v] {
			t.Fatalf("duplicate value %d at %d@%d", v, r.Partition, r.Offset)
		}
		seen[v] = true
		if l, ok := last[r.Partition]; ok && v <= l {
			t.Fatalf("partition %d: value %d after %d (reordered)", r.Partition, v, l)
		}
		last[r.Partition] = v
	}
	for v, ok := range seen {
		if !ok {
			t.Fatalf("gap: value %d never read", v)
		}
	}
}

// verifiableProducerAcks counts the JSON events VerifiableProducer prints,
// one per line.
func verifiableProducerAcks(t *testing.T, out string) (acked, sendErrors int) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Name    string `json:"name"`
			Message string `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Name {
		case "producer_send_success":
			acked++
		case "producer_send_error":
			if sendErrors == 0 {
				t.Logf("first send error: %s", sc.Text())
			}
			sendErrors++
		}
	}
	return acked, sendErrors
}
