package protocol

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Seeds live in testdata/fuzz; see seedFrames for how they were made.

func FuzzParseRequestHeader(f *testing.F) {
	f.Add([]byte{0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff, 0}, true)
	f.Fuzz(func(t *testing.T, frame []byte, flexible bool) {
		h, body, err := parseRequestHeader(frame, func(int16, int16) bool { return flexible })
		if err != nil {
			return
		}
		idLen := 0
		if h.ClientID != nil {
			idLen = len(*h.ClientID)
		}
		if len(body) > len(frame)-fixedHeaderLen-idLen {
			t.Fatalf("body of %d bytes from a %d-byte frame with a %d-byte client id", len(body), len(frame), idLen)
		}
		if !bytes.HasSuffix(frame, body) {
			t.Fatal("body is not the frame's tail")
		}
		if !flexible && len(body) != len(frame)-fixedHeaderLen-idLen {
			t.Fatal("header v1 consumed more than its fields")
		}
	})
}

// allKmsgVersions serves every API and version kmsg knows, so the fuzzer
// reaches every body decoder.
func allKmsgVersions(key int16) (int16, int16, bool) {
	r := kmsg.RequestForKey(key)
	if r == nil {
		return 0, 0, false
	}
	return 0, r.MaxVersion(), true
}

func FuzzDecodeRequest(f *testing.F) {
	for _, frame := range seedFrames() {
		f.Add(frame)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		req, err := decodeRequest(frame, allKmsgVersions)
		if err != nil {
			return
		}
		if req.Body == nil || req.Body.Key() != req.Key || req.Body.GetVersion() != req.Version {
			t.Fatalf("decoded %+v with body %#v", req, req.Body)
		}
		if req.Version != req.RequestedVersion && req.Key != apiVersionsKey {
			t.Fatalf("version rewritten for key %d", req.Key)
		}
	})
}

// seedFrames are well-formed frames (without size prefix) of common requests.
func seedFrames() [][]byte {
	id := "seed"
	var frames [][]byte
	add := func(r kmsg.Request) { frames = append(frames, encodeRequest(1, &id, r)[4:]) }
	for _, v := range []int16{0, 3, 4} {
		r := kmsg.NewPtrApiVersionsRequest()
		r.Version = v
		r.ClientSoftwareName = "seed"
		add(r)
	}
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	topic := kmsg.NewMetadataRequestTopic()
	name := "t"
	topic.Topic = &name
	meta.Topics = append(meta.Topics, topic)
	add(meta)
	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = []byte("not really a batch")
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	add(produce)
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 12
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	fetch.Topics = append(fetch.Topics, ft)
	add(fetch)
	return frames
}
