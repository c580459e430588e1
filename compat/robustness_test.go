package compat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn is a bare TCP connection for requests no well-behaved client
// sends. Requests are still built with kmsg; only the damage is by hand.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	corr int32
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c}
}

func (c *rawConn) write(b []byte) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// frame encodes req (with its version already set) as a full request frame.
func (c *rawConn) frame(req kmsg.Request) []byte {
	c.corr++
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("compat-raw")).AppendRequest(nil, req, c.corr)
}

// readResponse reads one response frame and decodes it as resp at
// version; ApiVersions responses always use header v0 (KIP-511).
func (c *rawConn) readResponse(resp kmsg.Response, version int16) error {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c.conn, size[:]); err != nil {
		return err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c.conn, body); err != nil {
		return err
	}
	if len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != c.corr {
		return fmt.Errorf("response correlation id mismatch, want %d, body % x", c.corr, body[:min(len(body), 8)])
	}
	body = body[4:]
	resp.SetVersion(version)
	if resp.IsFlexible() && resp.Key() != 18 {
		var err error
		if body, err = skipTags(body); err != nil {
			return err
		}
	}
	return resp.ReadFrom(body)
}

func skipTags(b []byte) ([]byte, error) {
	n, l := binary.Uvarint(b)
	if l <= 0 {
		return nil, errors.New("bad tag count")
	}
	b = b[l:]
	for i := uint64(0); i < n; i++ {
		_, l1 := binary.Uvarint(b)
		if l1 <= 0 {
			return nil, errors.New("bad tag")
		}
		size, l2 := binary.Uvarint(b[l1:])
		if l2 <= 0 || uint64(len(b)) < uint64(l1+l2)+size {
			return nil, errors.New("bad tag size")
		}
		b = b[uint64(l1+l2)+size:]
	}
	return b, nil
}

// expectClosed requires the broker to close the connection (after any
// error response it chooses to send) within 15s.
func (c *rawConn) expectClosed() {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	_, err := io.Copy(io.Discard, c.conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("broker kept the connection open for 15s after a malformed request")
	}
}

// checkServes requires a fresh client to produce and read back a record.
func checkServes(t *testing.T, b *harness.Broker, topic string, n int) {
	t.Helper()
	if !b.Running() {
		t.Fatal("broker process exited")
	}
	cl := newClient(t, b.Addr)
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: seqValue(n)})
	cl.Close()
	recs := consumeN(t, b.Addr, topic, n+1, 30*time.Second)
	if got := string(recs[n].Value); got != string(seqValue(n)) {
		t.Fatalf("record %d read back as %q", n, got)
	}
}

func TestRobustness(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "robust"
	createTopic(t, b.Addr, topic, 1, nil)
	served := 0
	cases := []struct {
		name string
		run  func(t *testing.T, c *rawConn)
	}{
		{"oversized size prefix", func(t *testing.T, c *rawConn) {
			c.write([]byte{0x7f, 0xff, 0xff, 0xff, 0, 18, 0, 3})
			c.expectClosed()
		}},
		{"negative size prefix", func(t *testing.T, c *rawConn) {
			c.write([]byte{0xff, 0xff, 0xff, 0xfe, 0, 18, 0, 3})
			c.expectClosed()
		}},
		{"truncated request", func(t *testing.T, c *rawConn) {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(9)
			f := c.frame(req)
			c.write(f[:len(f)/2])
			_ = c.conn.(*net.TCPConn).CloseWrite()
			c.expectClosed()
		}},
		{"garbage header", func(t *testing.T, c *rawConn) {
			g := []byte{0, 0, 0, 24}
			for i := 0; i < 24; i++ {
				g = append(g, 0xff^byte(i*37))
			}
			c.write(g)
			c.expectClosed()
		}},
		{"ApiVersions v99", func(t *testing.T, c *rawConn) {
			req := kmsg.NewPtrApiVersionsRequest()
			req.SetVersion(99)
			req.ClientSoftwareName, req.ClientSoftwareVersion = "compat", "1"
			c.write(c.frame(req))
			resp := kmsg.NewPtrApiVersionsResponse()
			if err := c.readResponse(resp, 0); err != nil {
				t.Fatalf("ApiVersions v99 response: %v", err)
			}
			if resp.ErrorCode != 35 || len(resp.ApiKeys) == 0 {
				t.Fatalf("ApiVersions v99: error code %d with %d api keys; want UNSUPPORTED_VERSION (35) and the supported ranges",
					resp.ErrorCode, len(resp.ApiKeys))
			}
		}},
		{"Produce with a wrong CRC", func(t *testing.T, c *rawConn) {
			version := produceVersion(t, c)
			req := kmsg.NewPtrProduceRequest()
			req.SetVersion(version)
			req.Acks = -1
			req.TimeoutMillis = 10000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = 0
			rp.Records = corruptBatch()
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			c.write(c.frame(req))
			resp := kmsg.NewPtrProduceResponse()
			if err := c.readResponse(resp, version); err != nil {
				t.Fatalf("Produce v%d response: %v", version, err)
			}
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
				t.Fatalf("Produce response shape: %+v", resp)
			}
			if code := resp.Topics[0].Partitions[0].ErrorCode; code != 2 {
				t.Fatalf("Produce with a flipped byte: error code %d, want CORRUPT_MESSAGE (2)", code)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, dialRaw(t, b.Addr))
			checkServes(t, b, topic, served)
			served++
		})
	}
	// The corrupt batch must not have been stored: the topic holds exactly
	// the records checkServes wrote.
	ctx := testCtx(t, 30*time.Second)
	ends, err := newAdmin(t, b.Addr).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup(topic, 0); o.Offset != int64(served) {
		t.Errorf("end offset of %s = %d, want %d", topic, o.Offset, served)
	}
}

// produceVersion picks the newest Produce version the broker serves that
// still names topics (v13 switched to topic IDs).
func produceVersion(t *testing.T, c *rawConn) int16 {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName, req.ClientSoftwareVersion = "compat", "1"
	c.write(c.frame(req))
	resp := kmsg.NewPtrApiVersionsResponse()
	if err := c.readResponse(resp, 3); err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	for _, k := range resp.ApiKeys {
		if k.ApiKey == 0 {
			return min(k.MaxVersion, 12)
		}
	}
	t.Fatal("broker does not list Produce in ApiVersions")
	return 0
}

// corruptBatch is a valid one-record v2 batch with a byte of its value
// flipped after the CRC was computed.
func corruptBatch() []byte {
	rec := kmsg.NewRecord()
	rec.Value = []byte("this record is damaged in flight")
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	records := rec.AppendTo(nil)

	batch := kmsg.NewRecordBatch()
	batch.Magic = 2
	batch.ProducerID = -1
	batch.ProducerEpoch = -1
	batch.FirstSequence = -1
	batch.FirstTimestamp = time.Now().UnixMilli()
	batch.MaxTimestamp = batch.FirstTimestamp
	batch.NumRecords = 1
	batch.Records = records
	raw := batch.AppendTo(nil)
	batch.Length = int32(len(raw) - 12)
	raw = batch.AppendTo(nil)
	// CRC-32C covers everything from the attributes on (offset 21).
	batch.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	raw = batch.AppendTo(nil)
	raw[len(raw)-3] ^= 0x20
	return raw
}

// TestMessageTooLarge produces a batch above message.max.bytes (Kafka's
// default 1048588): the broker must refuse it with MESSAGE_TOO_LARGE and
// store nothing, and a record under the limit must still go through.
func TestMessageTooLarge(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "too-large"
	createTopic(t, b.Addr, topic, 1, nil)
	cl := newClient(t, b.Addr, kgo.ProducerBatchMaxBytes(4<<20), kgo.MaxBufferedBytes(16<<20),
		kgo.RecordRetries(1), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := testCtx(t, 30*time.Second)
	big := make([]byte, 2<<20)
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: big}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("produce 2 MiB record: %v, want MESSAGE_TOO_LARGE", err)
	}
	produceSync(t, cl, &kgo.Record{Topic: topic, Value: make([]byte, 512<<10)})
	recs := consumeN(t, b.Addr, topic, 1, 30*time.Second)
	if len(recs[0].Value) != 512<<10 || recs[0].Offset != 0 {
		t.Fatalf("read back a %d-byte record at offset %d, want the 512 KiB one at 0", len(recs[0].Value), recs[0].Offset)
	}
}
