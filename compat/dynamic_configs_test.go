package compat

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// Dynamic broker configs through kafka-configs, as a Kafka operator sets
// them (KIP-226): the cluster-wide default and a per-broker value take
// effect without a restart and survive one. What kafka-configs prints,
// refusals included, is TestDynamicBrokerConfigsOracle's.
func TestDynamicBrokerConfigsCommand(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "dyn-broker-cfg"
	createTopic(t, b.Addr, topic, 1, nil)
	brokers := func(args ...string) string {
		return tool(t, "kafka-configs", append([]string{"--bootstrap-server", b.Addr, "--entity-type", "brokers"}, args...)...)
	}
	big := &kgo.Record{Topic: topic, Value: make([]byte, 2_000_000)}
	produceBig := func() error {
		cl := newClient(t, b.Addr, kgo.ProducerBatchMaxBytes(4_000_000), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordRetries(0), kgo.RequiredAcks(kgo.AllISRAcks()))
		defer cl.Close()
		return cl.ProduceSync(testCtx(t, 30*time.Second), big).FirstErr()
	}
	if err := produceBig(); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("2 MB record under the default message.max.bytes: %v, want MESSAGE_TOO_LARGE", err)
	}

	brokers("--entity-default", "--alter", "--add-config", "message.max.bytes=3000000")
	if err := produceBig(); err != nil {
		t.Fatalf("2 MB record after message.max.bytes=3000000 at the cluster default: %v", err)
	}
	// A per-broker limit, seen by the next connections. It is set for
	// another loopback address, so that the tools' own connections from
	// 127.0.0.1 are not limited.
	brokers("--entity-name", "0", "--alter", "--add-config", "max.connections.per.ip.overrides=[127.0.0.2:3]")
	if n := openConnections(t, "127.0.0.2", b.Addr, 6); n != 3 {
		t.Fatalf("%d of 6 connections stayed open with a limit of 3", n)
	}
	brokers("--entity-name", "0", "--alter", "--delete-config", "max.connections.per.ip.overrides")
	if n := openConnections(t, "127.0.0.2", b.Addr, 6); n != 6 {
		t.Fatalf("%d of 6 connections stayed open after the limit was deleted", n)
	}
	if err := b.Term(); err != nil {
		t.Fatal(err)
	}
	b.Restart(t)
	if err := produceBig(); err != nil {
		t.Fatalf("2 MB record after a restart: %v (the dynamic default was lost)", err)
	}
}

// openConnections opens n connections from the address from and reports how many the broker
// keeps: it closes those beyond a limit at once.
func openConnections(t *testing.T, from, addr string, n int) int {
	t.Helper()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	open := 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		var buf [1]byte
		_, err := c.Read(buf[:])
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			open++ // still open: nothing to read, no EOF
		}
	}
	return open
}
