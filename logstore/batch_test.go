package logstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestParseBatchesErrors(t *testing.T) {
	good := mkBatch(t, 3, 100).Raw
	two := append(append([]byte(nil), good...), good...)
	if bs, err := ParseBatches(two); err != nil || len(bs) != 2 {
		t.Fatalf("two batches: %d %v", len(bs), err)
	}
	if bs, err := ParseBatches(nil); err != nil || len(bs) != 0 {
		t.Fatal("empty input")
	}
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		buf  []byte
		want error
	}{
		{"trailing partial batch", two[:len(two)-1], ErrCorruptMessage},
		{"short prefix", good[:10], ErrCorruptMessage},
		{"length below minimum", mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 48); return b }), ErrCorruptMessage},
		{"length past end", mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], uint32(len(b))); return b }), ErrCorruptMessage},
		{"magic 1", mut(func(b []byte) []byte { b[16] = 1; return b }), ErrUnsupportedMagic},
		{"bad crc", mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrCorruptMessage},
		{"negative count", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 0xffffffff)
			binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
			return b
		}), ErrCorruptMessage},
		{"more records than offsets", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 9)
			binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
			return b
		}), ErrInvalidRecord},
	}
	for _, c := range cases {
		if _, err := ParseBatches(c.buf); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// The leader epoch and base offset are outside the CRC.
	b := mut(func(b []byte) []byte {
		binary.BigEndian.PutUint64(b, 77)
		binary.BigEndian.PutUint32(b[12:], 9)
		return b
	})
	if bs, err := ParseBatches(b); err != nil || bs[0].Header.BaseOffset != 77 || bs[0].Header.PartitionLeaderEpoch != 9 {
		t.Fatalf("%v", err)
	}
}

func TestEncodeDecodeAllCodecs(t *testing.T) {
	recs := []Record{
		{Key: []byte("k1"), Value: bytes.Repeat([]byte("value "), 50), Timestamp: 1000, Headers: []kmsg.Header{{Key: "h", Value: []byte("v")}}},
		{Key: nil, Value: []byte("x"), Timestamp: 1005},
		{Key: []byte("k3"), Value: nil, Timestamp: 999},
	}
	for _, codec := range []int8{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		b, err := EncodeBatch(BatchOptions{BaseOffset: 10, Compression: codec, ProducerID: 4, ProducerEpoch: 1, BaseSequence: 3}, recs)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := ParseBatches(b.Raw)
		if err != nil {
			t.Fatalf("codec %d: %v", codec, err)
		}
		h := bs[0].Header
		if h.Compression() != codec || h.NumRecords != 3 || h.LastOffsetDelta != 2 || h.MaxTimestamp != 1005 || h.FirstTimestamp != 1000 || h.ProducerID != 4 {
			t.Fatalf("codec %d header %+v", codec, h)
		}
		got, err := DecodeRecords(bs[0])
		if err != nil {
			t.Fatalf("codec %d: %v", codec, err)
		}
		if len(got) != 3 || string(got[0].Value) != string(recs[0].Value) || got[1].Key != nil || got[2].Value != nil ||
			got[0].Headers[0].Key != "h" || RecordTimestamp(&h, &got[2]) != 999 || got[2].OffsetDelta != 2 {
			t.Fatalf("codec %d records %+v", codec, got)
		}
	}
}

func TestDecodeRawSnappy(t *testing.T) {
	// librdkafka and franz-go send snappy without xerial framing.
	plain, _ := EncodeBatch(BatchOptions{}, []Record{{Key: []byte("a"), Value: []byte("b")}})
	body := s2.EncodeSnappy(nil, plain.Raw[BatchHeaderSize:])
	raw := append(append([]byte(nil), plain.Raw[:BatchHeaderSize]...), body...)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint16(raw[21:], uint16(CompressionSnappy))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	bs, err := ParseBatches(raw)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := DecodeRecords(bs[0])
	if err != nil || len(recs) != 1 || string(recs[0].Value) != "b" {
		t.Fatalf("%v %v", recs, err)
	}
}

func TestBuildBatchKV(t *testing.T) {
	raw, err := BuildBatch([]KV{{Key: []byte("k"), Value: []byte("v")}, {Key: []byte("t")}}, 42)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := ParseBatches(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := bs[0].Header
	if h.ProducerID != -1 || h.PartitionLeaderEpoch != -1 || h.MaxTimestamp != 42 || h.NumRecords != 2 {
		t.Fatalf("%+v", h)
	}
	recs, _ := DecodeRecords(bs[0])
	if string(recs[0].Key) != "k" || recs[1].Value != nil {
		t.Fatal("records")
	}
}

// TestKmsgAgrees cross-checks our header parsing with kmsg.RecordBatch.
func TestKmsgAgrees(t *testing.T) {
	b := mkBatch(t, 4, 123456)
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b.Raw); err != nil {
		t.Fatal(err)
	}
	h := b.Header
	if kb.FirstOffset != h.BaseOffset || kb.Length != h.BatchLength || uint32(kb.CRC) != h.CRC ||
		kb.LastOffsetDelta != h.LastOffsetDelta || kb.MaxTimestamp != h.MaxTimestamp || kb.NumRecords != h.NumRecords ||
		kb.FirstSequence != h.BaseSequence || kb.ProducerEpoch != h.ProducerEpoch {
		t.Fatalf("kmsg %+v vs %+v", kb, h)
	}
}

func TestDecodeRefusesSnappyBomb(t *testing.T) {
	plain, _ := EncodeBatch(BatchOptions{}, []Record{{Key: []byte("a"), Value: []byte("b")}})
	// A raw snappy block claiming 2 GiB of output in a few bytes.
	body := binary.AppendUvarint(nil, 1<<31)
	body = append(body, 0, 0, 0)
	raw := append(append([]byte(nil), plain.Raw[:BatchHeaderSize]...), body...)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint16(raw[21:], uint16(CompressionSnappy))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], castagnoli))
	bs, err := ParseBatches(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeRecords(bs[0]); !errors.Is(err, ErrCorruptMessage) {
		t.Fatalf("got %v", err)
	}
}
