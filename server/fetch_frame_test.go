package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/logstore/logtest"
)

// appendRecords appends n single-record batches with values of size bytes.
func appendRecords(t testing.TB, l logstore.Log, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		bt, err := logstore.EncodeBatch(logstore.BatchOptions{ProducerID: -1, BaseSequence: -1, ProducerEpoch: -1},
			[]logstore.Record{{Value: bytes.Repeat([]byte{byte('a' + i%26)}, size), Timestamp: int64(1000 + i)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader([]logstore.Batch{bt}, 0, -1); err != nil {
			t.Fatal(err)
		}
	}
}

// frameTestResponse builds a fetch response over reads of logs; the last
// topic is named so that it shares bytes with nothing.
func frameTestResponse(t *testing.T, logs []logstore.Log, version int16) (*kmsg.FetchResponse, []frameHole) {
	t.Helper()
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(version)
	for i := range logs {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = fmt.Sprintf("topic-%d", i)
		rt.TopicID = [16]byte{byte(i + 1)}
		for p := 0; p < 2; p++ {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = int32(p)
			rp.HighWatermark = logs[i].LogEndOffset()
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	var holes []frameHole
	for i, l := range logs {
		// Partition 0 of each topic gets data, partition 1 stays empty, so
		// placeholders are separated by kmsg's own bytes.
		rr, err := l.Read(l.LogStartOffset(), l.LogEndOffset(), 1<<30, true)
		if err != nil {
			t.Fatal(err)
		}
		holes = append(holes, frameHole{Slot: &resp.Topics[i].Partitions[0].RecordBatches, Data: rr})
	}
	return resp, holes
}

// wantBytes encodes the same response with the records copied in.
func wantBytes(t *testing.T, resp *kmsg.FetchResponse, holes []frameHole) []byte {
	t.Helper()
	for _, h := range holes {
		b, err := h.Data.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		*h.Slot = b
	}
	out := resp.AppendTo(nil)
	for _, h := range holes {
		*h.Slot = nil
	}
	return out
}

func TestFrameSplicesRecords(t *testing.T) {
	for _, version := range []int16{4, 11, 12, 13, 16} {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) {
			var logs []logstore.Log
			for i, n := range []int{3, 1, 40} {
				l := logtest.New(t, logstore.DefaultConfig())
				appendRecords(t, l, n, 10*(i+1))
				logs = append(logs, l)
			}
			resp, holes := frameTestResponse(t, logs, version)
			want := wantBytes(t, resp, holes)
			f, err := buildFrame(holes, resp.IsFlexible(), func() []byte { return resp.AppendTo(nil) })
			if err != nil {
				t.Fatal(err)
			}
			if f.Len() != len(want) {
				t.Fatalf("frame length %d, want %d", f.Len(), len(want))
			}
			var got bytes.Buffer
			n, err := f.WriteTo(&got)
			if err != nil || n != int64(len(want)) {
				t.Fatalf("WriteTo: %d bytes, %v", n, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatal("frame bytes differ from the copied encoding")
			}
			for _, h := range holes {
				if *h.Slot != nil {
					t.Fatal("slots must be reset after encoding")
				}
			}
		})
	}
}

// shortResult promises more bytes than it writes.
type shortResult struct{ logstore.ReadResult }

func (s shortResult) WriteTo(w io.Writer) (int64, error) {
	b, _ := s.Bytes()
	n, err := w.Write(b[:len(b)-1])
	return int64(n), err
}

func TestFrameRefusesShortData(t *testing.T) {
	l := logtest.New(t, logstore.DefaultConfig())
	appendRecords(t, l, 2, 50)
	resp, holes := frameTestResponse(t, []logstore.Log{l}, 12)
	holes[0].Data = shortResult{holes[0].Data}
	f, err := buildFrame(holes, resp.IsFlexible(), func() []byte { return resp.AppendTo(nil) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteTo(io.Discard); err == nil {
		t.Fatal("a short write from the log must fail the frame, not shift the bytes after it")
	}
}

// TestFrameOverTCP drives the sendfile path: FileLog data written by the
// frame to a real TCP connection, read back and decoded.
func TestFrameOverTCP(t *testing.T) {
	dir := t.TempDir()
	var logs []logstore.Log
	for i := 0; i < 2; i++ {
		l, err := logstore.OpenFileLog(filepath.Join(dir, fmt.Sprintf("t-%d", i)), logstore.DefaultConfig(), logstore.FileLogOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		appendRecords(t, l, 200, 500)
		logs = append(logs, l)
	}
	resp, holes := frameTestResponse(t, logs, 16)
	want := wantBytes(t, resp, holes)
	f, err := buildFrame(holes, resp.IsFlexible(), func() []byte { return resp.AppendTo(nil) })
	if err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*net.TCPConn); !ok {
		t.Fatal("want a *net.TCPConn")
	}
	if _, err := f.WriteTo(c); err != nil {
		t.Fatal(err)
	}
	c.Close()
	var b []byte
	select {
	case b = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out reading the frame")
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("received %d bytes differing from the %d expected", len(b), len(want))
	}
	dec := kmsg.NewPtrFetchResponse()
	dec.SetVersion(16)
	if err := dec.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	batches, err := logstore.ParseBatches(dec.Topics[1].Partitions[0].RecordBatches)
	if err != nil || len(batches) != 200 {
		t.Fatalf("decoded %d batches, err %v", len(batches), err)
	}
}
