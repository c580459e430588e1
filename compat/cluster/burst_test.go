package cluster

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pingRaw sends ApiVersions v0 on c and reads the answer within d.
func pingRaw(c net.Conn, d time.Duration) error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(0)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("compat-burst")).AppendRequest(nil, req, 7)
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write(frame); err != nil {
		return err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 6 || n > 1<<20 {
		return fmt.Errorf("ApiVersions response of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return err
	}
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 7 {
		return fmt.Errorf("correlation id %d, want 7", corr)
	}
	if code := int16(binary.BigEndian.Uint16(body[4:])); code != 0 {
		return fmt.Errorf("ApiVersions error code %d", code)
	}
	return nil
}

// TestConnectionBurstKeepsIsr: a burst of 10,000 connections at a
// partition leader must not starve replication: no follower leaves the
// ISR and an idempotent acks=all producer sees no error.
func TestConnectionBurstKeepsIsr(t *testing.T) {
	const (
		topic      = "burst-isr"
		partitions = 3
		attempts   = 10000
		dialers    = 400
		keepOpen   = 3000
	)
	metrics := map[int32]string{}
	c := harness.StartClusterPerBroker(t, 3, func(id int32) []string {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
		metrics[id] = addr
		return []string{"metrics.listener=" + addr}
	})
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)
	shrinksBefore := map[int32]float64{}
	for _, b := range c.Brokers {
		v, found, err := harness.ScrapeMetric(metrics[b.ID], "kafka_server_replicamanager_isrshrinks_total")
		if err != nil || !found {
			t.Fatalf("broker %d isrshrinks metric: found %v, %v", b.ID, found, err)
		}
		shrinksBefore[b.ID] = v
	}
	leader := mustStates(t, conn, topic, partitions)[0].Leader
	target := c.Broker(leader)
	if target == nil {
		t.Fatalf("partition 0 leader %d is not a cluster broker", leader)
	}

	p := startProducer(t, c.Addrs(), topic)
	time.Sleep(time.Second)

	// Watch the ISR of every partition through the burst.
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	var watchMu sync.Mutex
	var shrunk []string
	go func() {
		defer close(watchDone)
		for i := 0; i < 1000; i++ {
			if states, err := readStates(conn, topic, partitions); err == nil {
				for part, s := range states {
					if len(s.ISR) != 3 {
						watchMu.Lock()
						shrunk = append(shrunk, fmt.Sprintf("%s partition %d: %+v", time.Now().UTC().Format("15:04:05.000"), part, s))
						watchMu.Unlock()
					}
				}
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	var made, dialFails, served, notServed atomic.Int64
	start := time.Now()
	end := start.Add(90 * time.Second)
	var wg sync.WaitGroup
	for range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var open []net.Conn
			defer func() {
				time.Sleep(time.Second)
				for _, c := range open {
					c.Close()
				}
			}()
			for time.Now().Before(end) {
				n := made.Add(1)
				if n > attempts {
					return
				}
				cn, err := net.DialTimeout("tcp", target.Addr, 3*time.Second)
				if err != nil {
					dialFails.Add(1)
					continue
				}
				if n%4 == 0 {
					if err := pingRaw(cn, 5*time.Second); err != nil {
						notServed.Add(1)
					} else {
						served.Add(1)
					}
				}
				open = append(open, cn)
				if len(open) > keepOpen/dialers {
					open[0].Close()
					open = open[1:]
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("burst of %d connections at broker %d (leader of partition 0) in %v: %d dials failed, %d served ApiVersions, %d not served",
		min(made.Load(), attempts), leader, time.Since(start).Round(time.Millisecond), dialFails.Load(), served.Load(), notServed.Load())
	if made.Load() < attempts {
		t.Errorf("only %d of %d connection attempts made within 90 s", made.Load(), attempts)
	}

	// Past replica.lag.time.max.ms (6 s) after the burst, a follower
	// starved during it would have been dropped by now.
	time.Sleep(8 * time.Second)
	close(stopWatch)
	<-watchDone
	stopProducer(t, p)
	_, errs := p.stop(t)
	for text, e := range errs {
		t.Errorf("producer error (%d times): %s", e.n, text)
	}
	watchMu.Lock()
	for i, s := range shrunk {
		if i == 10 {
			t.Errorf("... and %d more", len(shrunk)-10)
			break
		}
		t.Errorf("ISR not all 3 replicas during the burst: %s", s)
	}
	watchMu.Unlock()
	for part, s := range mustStates(t, conn, topic, partitions) {
		if len(s.ISR) != 3 {
			t.Errorf("partition %d after the burst: %+v, want all 3 replicas in the ISR", part, s)
		}
	}
	for _, b := range c.Brokers {
		if !b.Running() {
			t.Errorf("broker %d exited", b.ID)
			continue
		}
		v, _, err := harness.ScrapeMetric(metrics[b.ID], "kafka_server_replicamanager_isrshrinks_total")
		if err != nil {
			t.Errorf("broker %d isrshrinks metric: %v", b.ID, err)
		} else if v != shrinksBefore[b.ID] {
			t.Errorf("broker %d kafka_server_replicamanager_isrshrinks_total went from %v to %v", b.ID, shrinksBefore[b.ID], v)
		}
		view, err := metadataView(b.Addr, topic)
		if err != nil {
			t.Errorf("broker %d Metadata after the burst: %v", b.ID, err)
			continue
		}
		for part, pv := range view {
			if len(pv.ISR) != 3 {
				t.Errorf("broker %d Metadata: partition %d %v, want all 3 replicas in the ISR", b.ID, part, pv)
			}
		}
	}
}
