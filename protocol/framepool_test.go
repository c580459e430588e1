package protocol

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestFrameClass(t *testing.T) {
	for _, tc := range []struct{ size, class int }{
		{1, 0}, {4096, 0}, {4097, 1}, {8192, 1}, {38 << 10, 4}, {1 << 20, 8},
		{8 << 20, 11}, {8<<20 + 1, -1}, {100 << 20, -1},
	} {
		if got := frameClass(tc.size); got != tc.class {
			t.Errorf("frameClass(%d) = %d, want %d", tc.size, got, tc.class)
		}
	}
	var p framePool
	f, pf := p.get(5000)
	if len(f) != 5000 || cap(f) != 8192 || pf == nil {
		t.Fatalf("get(5000): len %d cap %d pooled %v", len(f), cap(f), pf != nil)
	}
	if f, pf := p.get(9 << 20); len(f) != 9<<20 || pf != nil {
		t.Fatalf("get(9 MiB): len %d pooled %v; want an unpooled frame", len(f), pf != nil)
	}
}

// recyclingHandler recycles Produce frames.
type recyclingHandler struct{ *fakeHandler }

func (recyclingHandler) RecyclesFrame(key int16) bool { return key == 0 }

// A recycled frame must not be reused while its request is still being
// answered: pipelined produce requests whose second phase (Wait) reads the
// records late still see their own bytes, and later requests reuse frames.
func TestRecycledFrameOutlivesItsResponse(t *testing.T) {
	h := newFakeHandler()
	corrupted := make(chan string, 100)
	h.onHandle = func(_ context.Context, req *Request) Response {
		if req.Key == apiVersionsKey {
			return Response{Msg: h.apiVersions(req)}
		}
		pr := req.Body.(*kmsg.ProduceRequest)
		records := pr.Topics[0].Partitions[0].Records
		want := bytes.Repeat([]byte{byte(req.CorrelationID)}, len(records))
		check := func() {
			if !bytes.Equal(records, want) {
				corrupted <- fmt.Sprintf("request %d: records overwritten before its response", req.CorrelationID)
			}
		}
		check()
		return Response{Wait: func(context.Context) Response {
			time.Sleep(2 * time.Millisecond)
			check()
			return Response{Msg: req.Body.ResponseKind()}
		}}
	}
	ln := listen(t)
	serveOn(t, ln, recyclingHandler{h})
	c := dial(t, ln.Addr().String())
	produce := func(corr int32) []byte {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(9)
		req.Acks = 1
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = bytes.Repeat([]byte{byte(corr)}, 10000)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return encodeRequest(corr, nil, req)
	}
	const rounds, pipeline = 20, 5
	corr := int32(0)
	for range rounds {
		var frames []byte
		for range pipeline {
			corr++
			frames = append(frames, produce(corr)...)
		}
		c.write(frames)
		for range pipeline {
			if _, err := c.readFrame(); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(corrupted)
	for msg := range corrupted {
		t.Error(msg)
	}
}

// BenchmarkServeProduce pushes pipelined 48 KiB produce requests through a
// Server over loopback TCP: framing, header and body decoding, the
// response path, and the frame pool (with recycling) or the garbage
// collector (without).
func BenchmarkServeProduce(b *testing.B) {
	for _, recycle := range []bool{true, false} {
		b.Run(fmt.Sprintf("recycle=%v", recycle), func(b *testing.B) {
			h := newFakeHandler()
			var handler Handler = h
			if recycle {
				handler = recyclingHandler{h}
			}
			ln := listen(b)
			serveOn(b, ln, handler)
			c := dial(b, ln.Addr().String())

			req := kmsg.NewPtrProduceRequest()
			req.SetVersion(9)
			req.Acks = 1
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = "t"
			for p := range int32(3) {
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Partition = p
				rp.Records = make([]byte, 16<<10)
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			frame := encodeRequest(1, nil, req)
			const pipeline = 5
			batch := bytes.Repeat(frame, pipeline)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += pipeline {
				n := min(pipeline, b.N-i)
				c.write(batch[:n*len(frame)])
				for range n {
					if _, err := c.readFrame(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
