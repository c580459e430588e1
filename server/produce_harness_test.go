package server

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/zkstore"
)

// dataBroker is a broker on a loopback port over a log dir that outlives
// it, so a test can stop it and start another on the same data.
type dataBroker struct {
	b    *Broker
	addr string
	stop func()
	// sessionClosed is set by a test that closes the broker's session
	// itself: Run may then end with zkstore.ErrConnectionClosed.
	sessionClosed bool
}

func startDataBroker(t *testing.T, dir string, extra ...string) *dataBroker {
	t.Helper()
	raw := map[string]string{
		"broker.id":                        "0",
		"listeners":                        "PLAINTEXT://127.0.0.1:0",
		"log.dirs":                         filepath.Join(dir, "logs"),
		"offsets.topic.num.partitions":     "1",
		"group.initial.rebalance.delay.ms": "0",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		raw[extra[i]] = extra[i+1]
	}
	cfg, _, err := config.FromMap(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	db := &dataBroker{b: b}
	stopped := false
	db.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil && !(db.sessionClosed && errors.Is(err, zkstore.ErrConnectionClosed)) {
				t.Errorf("broker run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("broker did not stop within 10s")
		}
	}
	t.Cleanup(db.stop)
	deadline := time.Now().Add(5 * time.Second)
	for db.addr = b.Addr(); db.addr == ""; db.addr = b.Addr() {
		if time.Now().After(deadline) {
			t.Fatal("broker did not listen within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return db
}

func (db *dataBroker) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(db.addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (db *dataBroker) mustCreate(t *testing.T, name string, partitions int32, configs map[string]string) *Topic {
	t.Helper()
	tp, err := db.b.createTopic(CreateTopicRequest{Name: name, NumPartitions: partitions, ReplicationFactor: 1, Configs: configs})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return tp
}

// rawBatch encodes a batch of n records for a raw Produce request.
func rawBatch(t testing.TB, opts logstore.BatchOptions, n int, ts int64) []byte {
	t.Helper()
	recs := make([]logstore.Record, n)
	for i := range recs {
		recs[i] = logstore.Record{Value: []byte{byte('0' + i%10)}, Timestamp: ts}
	}
	bt, err := logstore.EncodeBatch(opts, recs)
	if err != nil {
		t.Fatal(err)
	}
	return bt.Raw
}

// produceRaw sends one partition's records and returns its answer.
func produceRaw(t *testing.T, cl *kgo.Client, topic string, partition int32, acks int16, records []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks = acks
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.ProduceResponse](t, cl, req)
	return resp.Topics[0].Partitions[0]
}

func plainOpts() logstore.BatchOptions {
	return logstore.BatchOptions{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
}

// rawRequest sends req at a fixed, non-flexible version over a plain TCP
// connection, bypassing franz-go's client (which rewrites a Produce
// request's acks), and decodes the answer.
func rawRequest(t *testing.T, addr string, req kmsg.Request, version int16) kmsg.Response {
	t.Helper()
	req.SetVersion(version)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw")).AppendRequest(nil, req, 1)
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	if err := resp.ReadFrom(body[4:]); err != nil { // after the correlation id
		t.Fatal(err)
	}
	return resp
}
