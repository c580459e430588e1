package compat

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests of issue 9: the broker bounds the memory that request frames hold
// and the connections it keeps, and users see it go on serving.

const mib = 1 << 20

// rssBytes is VmRSS of pid from /proc/<pid>/status.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read status of broker pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) < 1 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// rssSampler records the peak RSS of pid every 200 ms until stopped.
type rssSampler struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func sampleRSS(t *testing.T, pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err == nil {
				for _, line := range strings.Split(string(data), "\n") {
					if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						if f := strings.Fields(rest); len(f) > 0 {
							if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb<<10 > s.peak.Load() {
								s.peak.Store(kb << 10)
							}
						}
					}
				}
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { s.Stop() })
	return s
}

// Stop ends the sampling and returns the peak.
func (s *rssSampler) Stop() int64 {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return s.peak.Load()
}

// metricsAddr is a metrics.listener override on a fresh loopback port.
func metricsAddr(t *testing.T) (override, addr string) {
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(harness.FreePort(t)))
	return "metrics.listener=" + addr, addr
}

func mustMetric(t *testing.T, addr, name string, labels ...string) float64 {
	t.Helper()
	v, found, err := harness.ScrapeMetric(addr, name, labels...)
	if err != nil {
		t.Fatalf("scrape %s: %v", name, err)
	}
	if !found {
		t.Fatalf("metric %s%v not exported on %s", name, labels, addr)
	}
	return v
}

// waitMetric polls a metric until want(value) holds, within timeout, and
// returns the last value.
func waitMetric(t *testing.T, addr, name string, timeout time.Duration, what string, want func(float64) bool, labels ...string) float64 {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v := mustMetric(t, addr, name, labels...)
		if want(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %v: %s, last value %v after %v", name, labels, what, v, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const connCount = "kafka_server_socket_server_metrics_connection_count"

var plaintext = `listener="PLAINTEXT"`

// apiVersionsFrame is an ApiVersions v0 request frame.
func apiVersionsFrame(corr int32) []byte {
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(0)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("compat-limits")).AppendRequest(nil, req, corr)
}

// readFrame reads one response frame within d and checks its correlation
// id.
func readFrame(c net.Conn, corr int32, d time.Duration) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 64*mib {
		return nil, fmt.Errorf("response frame of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	if len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != corr {
		return nil, fmt.Errorf("correlation id mismatch, want %d", corr)
	}
	return body[4:], nil
}

// apiVersions sends ApiVersions on c and requires an answer with error
// code 0 within d.
func apiVersions(c net.Conn, corr int32, d time.Duration) error {
	_ = c.SetWriteDeadline(time.Now().Add(d))
	if _, err := c.Write(apiVersionsFrame(corr)); err != nil {
		return fmt.Errorf("write ApiVersions: %w", err)
	}
	body, err := readFrame(c, corr, d)
	if err != nil {
		return fmt.Errorf("read ApiVersions response: %w", err)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decode ApiVersions response: %w", err)
	}
	if resp.ErrorCode != 0 {
		return fmt.Errorf("ApiVersions error code %d", resp.ErrorCode)
	}
	return nil
}

// closedByBroker reports nil when the broker closes c (EOF or reset on
// read, whatever it sent first) within d; an ApiVersions request is sent
// first so a broker that kept c would answer it.
func closedByBroker(c net.Conn, d time.Duration) error {
	_ = c.SetWriteDeadline(time.Now().Add(d))
	_, _ = c.Write(apiVersionsFrame(1)) // may fail once the broker has closed
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 4096))
	if err == nil {
		// An answer means the broker served the connection.
		return errors.New("broker answered on a connection it should have closed")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("connection still open after %v", d)
	}
	return nil // EOF, reset: closed
}

func dialFrom(local string, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	return d.Dial("tcp", addr)
}

// trafficResult is what a background producer saw.
type traffic struct {
	produced atomic.Int64
	mu       sync.Mutex
	errs     []error
	stop     chan struct{}
	done     chan struct{}
}

func (tr *traffic) fail(err error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.errs) < 10 {
		tr.errs = append(tr.errs, err)
	}
}

// startProducer produces records of size valueSize with acks=all to topic
// in batches of batch until stopped, at most maxRecords, with a pause
// between batches.
func startProducer(t *testing.T, addr, topic string, valueSize, batch, maxRecords int, pause time.Duration) *traffic {
	t.Helper()
	cl := newClient(t, addr, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(4*mib), kgo.ProducerLinger(0))
	tr := &traffic{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(tr.done)
		seq := 0
		for seq < maxRecords {
			select {
			case <-tr.stop:
				return
			default:
			}
			var recs []*kgo.Record
			for i := 0; i < batch && seq < maxRecords; i++ {
				v := make([]byte, valueSize)
				copy(v, seqValue(seq))
				recs = append(recs, &kgo.Record{Topic: topic, Value: v})
				seq++
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := cl.ProduceSync(ctx, recs...).FirstErr()
			cancel()
			if err != nil {
				tr.fail(fmt.Errorf("produce: %w", err))
				return
			}
			tr.produced.Add(int64(len(recs)))
			select {
			case <-tr.stop:
				return
			case <-time.After(pause):
			}
		}
	}()
	t.Cleanup(tr.Stop)
	return tr
}

// Stop stops the producer and waits for its last batch.
func (tr *traffic) Stop() {
	select {
	case <-tr.stop:
	default:
		close(tr.stop)
	}
	<-tr.done
}

func (tr *traffic) check(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, err := range tr.errs {
		t.Errorf("client error: %v", err)
	}
}

// checkAllBack reads topic back and requires exactly n records, the i-th
// starting with seqValue(i).
func checkAllBack(t *testing.T, addr, topic string, n int) {
	t.Helper()
	recs := consumeN(t, addr, topic, n, 60*time.Second, kgo.FetchMaxBytes(8*mib))
	for i, r := range recs {
		if !strings.HasPrefix(string(r.Value), string(seqValue(i))) {
			t.Fatalf("record %d starts %q, want %q", i, r.Value[:min(8, len(r.Value))], seqValue(i))
		}
	}
}

func TestSlowFramesBoundedMemory(t *testing.T) {
	const (
		pool      = 64 * mib
		attackers = 200
		perConn   = 160 << 10
		slack     = 32 * mib
		records   = 2000
	)
	mo, maddr := metricsAddr(t)
	b := harness.StartBroker(t, "queued.max.request.bytes="+strconv.Itoa(pool), mo)
	topic := "slow-frames"
	createTopic(t, b.Addr, topic, 1, nil)
	warm := "slow-frames-warmup"
	createTopic(t, b.Addr, warm, 1, nil)
	wcl := newClient(t, b.Addr)
	for i := range 200 {
		produceSync(t, wcl, &kgo.Record{Topic: warm, Value: make([]byte, 1024), Key: seqValue(i)})
	}
	wcl.Close()
	consumeN(t, b.Addr, warm, 200, 30*time.Second)
	time.Sleep(time.Second)
	baseline := rssBytes(t, b.Pid())
	if avail := mustMetric(t, maddr, "kafka_network_socketserver_memorypoolavailable"); avail > pool || avail < pool/2 {
		t.Errorf("memorypoolavailable %v at rest, want close to %d", avail, pool)
	}
	t.Logf("baseline RSS %d MiB", baseline/mib)

	sampler := sampleRSS(t, b.Pid())
	// RSS counts touched pages only: a broker that allocated each
	// declared 100 MiB frame up front would barely show in it, but its Go
	// heap would hold the allocations.
	heapBase := mustMetric(t, maddr, "go_memstats_heap_inuse_bytes")
	var heapPeak atomic.Int64
	heapStop, heapDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(heapDone)
		for i := 0; i < 600; i++ {
			if v, found, err := harness.ScrapeMetric(maddr, "go_memstats_heap_inuse_bytes"); err == nil && found && int64(v) > heapPeak.Load() {
				heapPeak.Store(int64(v))
			}
			select {
			case <-heapStop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	// Each attacker declares a 100 MiB Produce frame, sends 256 KiB of it
	// and then one byte every 200 ms.
	var header []byte
	header = binary.BigEndian.AppendUint32(header, 104857600)
	header = binary.BigEndian.AppendUint16(header, 0) // Produce
	header = binary.BigEndian.AppendUint16(header, 7) // non-flexible, header v1
	header = binary.BigEndian.AppendUint32(header, 4242)
	header = binary.BigEndian.AppendUint16(header, uint16(len("compat-slow")))
	header = append(header, "compat-slow"...)
	first := append(header, make([]byte, 256<<10)...)

	var (
		wg           sync.WaitGroup
		stopAttack   = make(chan struct{})
		dialFails    atomic.Int64
		closedByPeer atomic.Int64
		connsMu      sync.Mutex
		conns        []net.Conn
	)
	for range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
			if err != nil {
				dialFails.Add(1)
				return
			}
			connsMu.Lock()
			conns = append(conns, c)
			connsMu.Unlock()
			_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.Write(first); err != nil {
				closedByPeer.Add(1)
				return
			}
			for i := 0; i < 150; i++ { // at most 30 s
				select {
				case <-stopAttack:
					return
				case <-time.After(200 * time.Millisecond):
				}
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := c.Write([]byte{0}); err != nil {
					var ne net.Error
					if !errors.As(err, &ne) || !ne.Timeout() {
						closedByPeer.Add(1)
						return
					}
				}
			}
		}()
	}
	attackStart := time.Now()
	time.Sleep(2 * time.Second) // let the attackers' first 256 KiB land
	used, _, _ := harness.ScrapeMetric(maddr, "kafka_network_socketserver_memorypoolused")
	t.Logf("memorypoolused with %d attackers: %.0f MiB", attackers, used/mib)
	if used > pool {
		t.Errorf("memorypoolused %v exceeds queued.max.request.bytes %d", used, pool)
	}

	tr := startProducer(t, b.Addr, topic, 1024, 100, records, 300*time.Millisecond)
	prodDeadline := time.After(60 * time.Second)
	select {
	case <-tr.done:
	case <-prodDeadline:
		t.Errorf("producer made %d of %d records within 60 s", tr.produced.Load(), records)
	}
	tr.Stop()
	tr.check(t)
	if got := tr.produced.Load(); got == records {
		checkAllBack(t, b.Addr, topic, records)
	} else if !t.Failed() {
		t.Errorf("produced %d of %d records", got, records)
	}
	if rest := 20*time.Second - time.Since(attackStart); rest > 0 {
		time.Sleep(rest)
	}
	peak := sampler.Stop()
	close(heapStop)
	<-heapDone
	limit := baseline + pool + attackers*perConn + slack
	// The heap holds garbage until the next GC, up to GOGC=100's twice
	// the live bytes: twice the pool and the allowance, where up-front
	// allocation of the declared frames would be 200 x 100 MiB.
	heapLimit := int64(heapBase) + 2*(pool+attackers*perConn) + slack
	t.Logf("Go heap in use %d MiB at rest, peak %d MiB (limit %d MiB)", int64(heapBase)/mib, heapPeak.Load()/mib, heapLimit/mib)
	if heapPeak.Load() >= heapLimit {
		t.Errorf("peak Go heap in use %d MiB, want below %d MiB at rest + 2 x (pool 64 MiB + %d x 160 KiB) + 32 MiB = %d MiB",
			heapPeak.Load()/mib, int64(heapBase)/mib, attackers, heapLimit/mib)
	}
	t.Logf("peak RSS %d MiB (limit %d MiB); %d attackers closed by the broker, %d dials failed",
		peak/mib, limit/mib, closedByPeer.Load(), dialFails.Load())
	if peak >= limit {
		t.Errorf("peak RSS %d MiB, want below baseline %d MiB + pool 64 MiB + %d x 160 KiB + 32 MiB = %d MiB",
			peak/mib, baseline/mib, attackers, limit/mib)
	}
	if !b.Running() {
		t.Fatal("broker exited under slow frames")
	}

	close(stopAttack)
	wg.Wait()
	connsMu.Lock()
	for _, c := range conns {
		c.Close()
	}
	connsMu.Unlock()
	after := baseline + 48*mib
	deadline := time.Now().Add(30 * time.Second)
	var rss int64
	for {
		rss = rssBytes(t, b.Pid())
		if rss < after {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("RSS %d MiB 30 s after the attackers closed, want below baseline %d MiB + 48 MiB", rss/mib, baseline/mib)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("RSS after the attackers closed: %d MiB", rss/mib)
	waitMetric(t, maddr, "kafka_network_socketserver_memorypoolused", 10*time.Second,
		"want 0 once the attackers closed", func(v float64) bool { return v == 0 })
	checkServes(t, b, topic, records)
}

// fetchFrame is a Fetch v11 request for partition 0 of topic from offset
// 0, up to 1 MiB.
func fetchFrame(topic string, corr int32) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(11)
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = mib
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = 0
	rp.FetchOffset = 0
	rp.PartitionMaxBytes = mib
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("compat-stuck")).AppendRequest(nil, req, corr)
}

func TestStuckReaderClosed(t *testing.T) {
	const idle = 5 * time.Second
	b := harness.StartBroker(t, "connections.max.idle.ms=5000")
	topic := "stuck-reader"
	createTopic(t, b.Addr, topic, 1, nil)
	fill := newClient(t, b.Addr, kgo.ProducerBatchMaxBytes(2*mib))
	var recs []*kgo.Record
	for i := range 1024 { // 16 MiB
		v := make([]byte, 16<<10)
		copy(v, seqValue(i))
		recs = append(recs, &kgo.Record{Topic: topic, Value: v})
	}
	produceSync(t, fill, recs...)
	fill.Close()
	time.Sleep(time.Second)
	baseline := rssBytes(t, b.Pid())
	t.Logf("baseline RSS %d MiB", baseline/mib)
	sampler := sampleRSS(t, b.Pid())

	side := "stuck-reader-side"
	createTopic(t, b.Addr, side, 1, nil)
	tr := startProducer(t, b.Addr, side, 100, 10, 100000, 100*time.Millisecond)

	c, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	_ = tc.SetReadBuffer(4096)
	_ = tc.SetWriteBuffer(4096)
	// pending is what is left of the last batch after a write cut by its
	// deadline: it goes out first so the frames stay whole.
	var pending []byte
	corr := int32(0)
	var firstBlock time.Time
	start := time.Now()
	var closeErr error
	for i := 0; i < 1000000 && time.Since(start) < 90*time.Second; i++ {
		if len(pending) == 0 {
			for range 50 {
				corr++
				pending = append(pending, fetchFrame(topic, corr)...)
			}
		}
		_ = c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := c.Write(pending)
		pending = pending[n:]
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if firstBlock.IsZero() {
				firstBlock = time.Now()
			}
			continue
		}
		closeErr = err
		break
	}
	if closeErr == nil {
		t.Fatalf("a connection that never reads its Fetch responses was still open after %v (writes first blocked %v in)",
			time.Since(start).Round(time.Second), firstBlock.Sub(start).Round(time.Millisecond))
	}
	if firstBlock.IsZero() {
		t.Logf("the broker closed the connection before the writes blocked: %v", closeErr)
	} else {
		took := time.Since(firstBlock)
		t.Logf("closed %v after the writes first blocked (%d requests sent): %v", took.Round(time.Millisecond), corr, closeErr)
		if took > idle+15*time.Second {
			t.Errorf("stuck reader closed %v after its writes first blocked, want within connections.max.idle.ms 5 s + 15 s", took)
		}
	}
	tr.Stop()
	tr.check(t)
	n := int(tr.produced.Load())
	if n == 0 {
		t.Fatal("side producer produced nothing while the stuck reader was open")
	}
	recsBack := consumeN(t, b.Addr, side, n, 60*time.Second)
	for i, r := range recsBack {
		if !strings.HasPrefix(string(r.Value), string(seqValue(i))) {
			t.Fatalf("side record %d is %q", i, r.Value[:8])
		}
	}
	peak := sampler.Stop()
	t.Logf("peak RSS %d MiB", peak/mib)
	if peak >= baseline+64*mib {
		t.Errorf("peak RSS %d MiB with a stuck reader, want below baseline %d MiB + 64 MiB", peak/mib, baseline/mib)
	}
	if !b.Running() {
		t.Fatal("broker exited")
	}
}

// openServed dials n connections from local (empty for the default) and
// requires each to answer ApiVersions.
func openServed(t *testing.T, local, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	t.Cleanup(func() {
		for _, c := range out {
			c.Close()
		}
	})
	for i := range n {
		c, err := dialFrom(local, addr)
		if err != nil {
			t.Fatalf("dial %d from %q: %v", i, local, err)
		}
		out = append(out, c)
		if err := apiVersions(c, int32(i+1), 5*time.Second); err != nil {
			t.Fatalf("connection %d of %d from %q not served: %v", i+1, n, local, err)
		}
	}
	return out
}

func requireRefused(t *testing.T, local, addr, what string) {
	t.Helper()
	c, err := dialFrom(local, addr)
	if err != nil {
		return // refused outright is closed too
	}
	defer c.Close()
	if err := closedByBroker(c, 5*time.Second); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

func stillServed(t *testing.T, conns []net.Conn, what string) {
	t.Helper()
	for i, c := range conns {
		if err := apiVersions(c, int32(1000+i), 5*time.Second); err != nil {
			t.Errorf("%s: connection %d: %v", what, i, err)
		}
	}
}

func TestMaxConnectionsLimits(t *testing.T) {
	t.Run("broker-wide", func(t *testing.T) {
		mo, maddr := metricsAddr(t)
		b := harness.StartBroker(t, "max.connections=50", mo)
		// The harness's readiness probe must be gone before counting.
		waitMetric(t, maddr, connCount, 10*time.Second, "want 0 before the test's connections",
			func(v float64) bool { return v == 0 }, plaintext)
		conns := openServed(t, "", b.Addr, 50)
		waitMetric(t, maddr, connCount, 5*time.Second, "want 50", func(v float64) bool { return v == 50 }, plaintext)
		requireRefused(t, "", b.Addr, "51st connection with max.connections=50")
		stillServed(t, conns, "after the 51st was refused")
		for _, c := range conns[:10] {
			c.Close()
		}
		conns = conns[10:]
		waitMetric(t, maddr, connCount, 10*time.Second, "want 40 after closing 10", func(v float64) bool { return v == 40 }, plaintext)
		more := openServed(t, "", b.Addr, 10)
		waitMetric(t, maddr, connCount, 5*time.Second, "want 50 again", func(v float64) bool { return v == 50 }, plaintext)
		requireRefused(t, "", b.Addr, "51st connection after refilling")
		stillServed(t, append(conns, more...), "at the end")
		if created := mustMetric(t, maddr, "kafka_server_socket_server_metrics_connection_creation_total", plaintext); created < 60 {
			t.Errorf("connection_creation_total %v, want at least the 60 served connections", created)
		}
	})
	t.Run("per-ip", func(t *testing.T) {
		// Linux routes all of 127.0.0.0/8 to the loopback interface, so
		// 127.0.0.2 is a second client address without any set-up.
		mo, maddr := metricsAddr(t)
		b := harness.StartBroker(t, "max.connections.per.ip=20", "max.connections.per.ip.overrides=127.0.0.2:5", mo)
		waitMetric(t, maddr, connCount, 10*time.Second, "want 0 before the test's connections",
			func(v float64) bool { return v == 0 }, plaintext)
		other := openServed(t, "127.0.0.2", b.Addr, 5)
		requireRefused(t, "127.0.0.2", b.Addr, "6th connection from 127.0.0.2 with its override of 5")
		local := openServed(t, "127.0.0.1", b.Addr, 20)
		requireRefused(t, "127.0.0.1", b.Addr, "21st connection from 127.0.0.1 with max.connections.per.ip=20")
		waitMetric(t, maddr, connCount, 5*time.Second, "want 25 (5 + 20)", func(v float64) bool { return v == 25 }, plaintext)
		stillServed(t, other, "127.0.0.2 after refusals")
		stillServed(t, local, "127.0.0.1 after refusals")
		other[0].Close()
		waitMetric(t, maddr, connCount, 10*time.Second, "want 24", func(v float64) bool { return v == 24 }, plaintext)
		openServed(t, "127.0.0.2", b.Addr, 1)
	})
	t.Run("creation-rate", func(t *testing.T) {
		const rate, n = 20, 60
		b := harness.StartBroker(t, "max.connection.creation.rate="+strconv.Itoa(rate))
		time.Sleep(time.Second) // the readiness probe's token comes back
		var wg sync.WaitGroup
		errs := make(chan error, n)
		start := time.Now()
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
				if err != nil {
					errs <- fmt.Errorf("dial %d: %w", i, err)
					return
				}
				defer c.Close()
				// Delayed, not refused: every connection is served.
				if err := apiVersions(c, 1, 20*time.Second); err != nil {
					errs <- fmt.Errorf("connection %d: %w", i, err)
				}
			}()
		}
		wg.Wait()
		took := time.Since(start)
		close(errs)
		for err := range errs {
			t.Errorf("max.connection.creation.rate=%d must delay, not refuse: %v", rate, err)
		}
		t.Logf("%d simultaneous connections at max.connection.creation.rate=%d all answered after %v", n, rate, took.Round(time.Millisecond))
		// A second's worth may come at once; the other 40 wait 2 s.
		if took < 1500*time.Millisecond {
			t.Errorf("%d connections served within %v at max.connection.creation.rate=%d: not throttled", n, took, rate)
		}
	})
}

func TestIdleConnectionsClosed(t *testing.T) {
	b := harness.StartBroker(t, "connections.max.idle.ms=2000")
	idle, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := net.DialTimeout("tcp", b.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	if err := apiVersions(idle, 1, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	idleSince := time.Now()
	idleClosed := make(chan time.Duration, 1)
	go func() {
		_ = idle.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, _ = io.Copy(io.Discard, idle)
		idleClosed <- time.Since(idleSince)
	}()
	for i := range 12 { // 6 s
		if err := apiVersions(busy, int32(i+1), 5*time.Second); err != nil {
			t.Fatalf("busy connection (ApiVersions every 500 ms) after %v: %v", time.Since(idleSince).Round(time.Millisecond), err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := apiVersions(busy, 100, 5*time.Second); err != nil {
		t.Fatalf("busy connection after 6 s: %v", err)
	}
	took := <-idleClosed
	t.Logf("idle connection closed after %v", took.Round(time.Millisecond))
	if took > 7*time.Second {
		t.Errorf("idle connection closed after %v, want within connections.max.idle.ms 2 s + 5 s", took)
	}
	if took < 1500*time.Millisecond {
		t.Errorf("idle connection closed after %v, before connections.max.idle.ms 2 s", took)
	}
}

// burstResult counts what a connection burst saw.
type burstResult struct {
	attempts, dialFails, served, notServed atomic.Int64
	// firstErr is the first dial or ApiVersions error, for the log.
	firstErr atomic.Value
}

// burst makes total connection attempts to addr with dialers concurrent
// dialers, keeping up to keep connections open at once (the oldest of a
// dialer's are closed as it goes); every fourth connection sends
// ApiVersions. hold is how long the last connections stay open. It
// returns when every connection is closed.
func burst(addr string, total, dialers, keep int, hold time.Duration, deadline time.Duration) *burstResult {
	r := &burstResult{}
	perDialer := max(1, keep/dialers)
	end := time.Now().Add(deadline)
	var wg sync.WaitGroup
	for range dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var open []net.Conn
			defer func() {
				if hold > 0 {
					time.Sleep(hold)
				}
				for _, c := range open {
					c.Close()
				}
			}()
			for time.Now().Before(end) {
				n := r.attempts.Add(1)
				if n > int64(total) {
					return
				}
				c, err := net.DialTimeout("tcp", addr, 3*time.Second)
				if err != nil {
					r.firstErr.CompareAndSwap(nil, err.Error())
					r.dialFails.Add(1)
					continue
				}
				if n%4 == 0 {
					if err := apiVersions(c, 1, 5*time.Second); err != nil {
						r.firstErr.CompareAndSwap(nil, err.Error())
						r.notServed.Add(1)
					} else {
						r.served.Add(1)
					}
				}
				open = append(open, c)
				if len(open) > perDialer {
					open[0].Close()
					open = open[1:]
				}
			}
		}()
	}
	wg.Wait()
	if r.attempts.Load() > int64(total) {
		r.attempts.Store(int64(total))
	}
	return r
}

func TestConnectionBurst(t *testing.T) {
	t.Run("10000", func(t *testing.T) {
		mo, maddr := metricsAddr(t)
		b := harness.StartBroker(t, mo)
		topic := "burst"
		createTopic(t, b.Addr, topic, 1, nil)
		tr := startProducer(t, b.Addr, topic, 200, 10, 100000, 50*time.Millisecond)
		time.Sleep(500 * time.Millisecond)
		start := time.Now()
		r := burst(b.Addr, 10000, 400, 3000, time.Second, 90*time.Second)
		t.Logf("burst of %d attempts in %v: %d dials failed, %d served ApiVersions, %d not served",
			r.attempts.Load(), time.Since(start).Round(time.Millisecond), r.dialFails.Load(), r.served.Load(), r.notServed.Load())
		time.Sleep(time.Second)
		tr.Stop()
		tr.check(t)
		if !b.Running() {
			t.Fatal("broker exited during the connection burst")
		}
		if r.attempts.Load() < 10000 {
			t.Errorf("only %d of 10000 connection attempts made within 90 s", r.attempts.Load())
		}
		if r.notServed.Load() > 0 || r.dialFails.Load() > 0 {
			t.Errorf("with no connection limits set, %d dials failed and %d connections were not served", r.dialFails.Load(), r.notServed.Load())
		}
		n := int(tr.produced.Load())
		if n == 0 {
			t.Fatal("producer produced nothing during the burst")
		}
		checkAllBack(t, b.Addr, topic, n)
		checkServes(t, b, topic, n)
		created := mustMetric(t, maddr, "kafka_server_socket_server_metrics_connection_creation_total", plaintext)
		if created < 10000 {
			t.Errorf("connection_creation_total %v after a burst of 10000", created)
		}
		waitMetric(t, maddr, connCount, 15*time.Second, "want the burst's connections gone",
			func(v float64) bool { return v < 20 }, plaintext)
	})
	t.Run("fd-limit", func(t *testing.T) {
		b := harness.StartBrokerWrapped(t, []string{"prlimit", "--nofile=512:512"})
		limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", b.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(limits), "Max open files            512                  512") {
			t.Fatalf("broker not under the 512 fd limit:\n%s", limits)
		}
		topic := "burst-fd"
		createTopic(t, b.Addr, topic, 1, nil)
		tr := startProducer(t, b.Addr, topic, 200, 10, 100000, 50*time.Millisecond)
		time.Sleep(time.Second)
		before := tr.produced.Load()
		start := time.Now()
		r := burst(b.Addr, 2000, 2000, 2000, 3*time.Second, 60*time.Second)
		during := tr.produced.Load() - before
		if e := r.firstErr.Load(); e != nil {
			t.Logf("first burst error: %v", e)
		}
		t.Logf("burst of %d simultaneous connections to a broker with 512 fds in %v: %d dials failed, %d served, %d not served; %d records produced meanwhile",
			r.attempts.Load(), time.Since(start).Round(time.Millisecond), r.dialFails.Load(), r.served.Load(), r.notServed.Load(), during)
		if !b.Running() {
			t.Fatal("broker exited when its file descriptors ran out")
		}
		afterBurst := tr.produced.Load()
		time.Sleep(2 * time.Second)
		tr.Stop()
		tr.check(t)
		if tr.produced.Load() <= afterBurst {
			t.Errorf("the client connected before the burst produced nothing in the 2 s after it (%d records in all)", tr.produced.Load())
		}
		if during == 0 {
			t.Errorf("the client connected before the burst produced nothing during it")
		}
		n := int(tr.produced.Load())
		// New clients are served once the burst is gone.
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := harnessPing(b.Addr)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no new client served within 30 s of the burst closing: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		checkAllBack(t, b.Addr, topic, n)
		checkServes(t, b, topic, n)
	})
}

// harnessPing is one fresh connection that must answer ApiVersions.
func harnessPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	return apiVersions(c, 1, 3*time.Second)
}
