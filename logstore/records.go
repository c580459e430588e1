package logstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxDecompressedBytes bounds what one batch may inflate to, so that a
// compression bomb in a produced batch cannot exhaust memory when the
// cleaner or the group coordinator decodes it.
const maxDecompressedBytes = 256 << 20

// DecodeRecords decompresses a batch's records and decodes them with
// kmsg.Record. It is not on the produce path: compaction, the group
// coordinator and OffsetForTimestamp use it.
func DecodeRecords(b Batch) ([]kmsg.Record, error) {
	if len(b.Raw) < BatchHeaderSize {
		return nil, fmt.Errorf("%w: batch of %d bytes", ErrCorruptMessage, len(b.Raw))
	}
	data, err := decompress(b.Header.Compression(), b.Raw[BatchHeaderSize:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptMessage, err)
	}
	n := int(b.Header.NumRecords)
	if n < 0 || n > len(data) { // every record takes at least one byte
		return nil, fmt.Errorf("%w: %d records in %d bytes", ErrCorruptMessage, n, len(data))
	}
	recs := make([]kmsg.Record, n)
	for i := range recs {
		length, w := binary.Varint(data)
		if w <= 0 || length < 0 || int64(len(data)-w) < length {
			return nil, fmt.Errorf("%w: record %d framing", ErrCorruptMessage, i)
		}
		end := w + int(length)
		if err := recs[i].ReadFrom(data[:end]); err != nil {
			return nil, fmt.Errorf("%w: record %d: %v", ErrCorruptMessage, i, err)
		}
		data = data[end:]
	}
	return recs, nil
}

func decompress(codec int8, src []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case CompressionNone:
		return src, nil
	case CompressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	case CompressionSnappy:
		// Kafka's Java client frames snappy the xerial way; librdkafka and
		// franz-go may send it raw. xerial.Decode accepts both, but it
		// allocates what the blocks claim first, so check the claims.
		n, err := snappyDecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n > maxDecompressedBytes {
			return nil, fmt.Errorf("batch inflates beyond %d bytes", maxDecompressedBytes)
		}
		return xerial.Decode(src)
	case CompressionLZ4:
		r = lz4.NewReader(bytes.NewReader(src))
	case CompressionZstd:
		zr, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxDecompressedBytes))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxDecompressedBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxDecompressedBytes {
		return nil, fmt.Errorf("batch inflates beyond %d bytes", maxDecompressedBytes)
	}
	return out, nil
}

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// snappyDecodedLen sums the decoded lengths the snappy blocks announce,
// raw or in xerial framing (magic, two int32 versions, then length-prefixed
// blocks).
func snappyDecodedLen(src []byte) (int, error) {
	if len(src) < 16 || !bytes.Equal(src[:8], xerialMagic) {
		return s2.DecodedLen(src)
	}
	total := 0
	for pos := 16; pos < len(src); {
		if len(src)-pos < 4 {
			return 0, errors.New("snappy: truncated xerial block")
		}
		size := int(binary.BigEndian.Uint32(src[pos:]))
		pos += 4
		if size < 0 || size > len(src)-pos {
			return 0, errors.New("snappy: xerial block overflows")
		}
		n, err := s2.DecodedLen(src[pos : pos+size])
		if err != nil {
			return 0, err
		}
		total += n
		if total > maxDecompressedBytes {
			return total, nil
		}
		pos += size
	}
	return total, nil
}

func compress(codec int8, src []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch codec {
	case CompressionNone:
		return src, nil
	case CompressionGzip:
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CompressionSnappy:
		// The xerial framing is what every client can read.
		return xerial.Encode(nil, src), nil
	case CompressionLZ4:
		w := lz4.NewWriter(&buf)
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	case CompressionZstd:
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown compression codec %d", codec)
	}
	return buf.Bytes(), nil
}

// Record is one record to encode with EncodeBatch. Value nil is a tombstone.
type Record struct {
	Key       []byte
	Value     []byte
	Headers   []kmsg.Header
	Timestamp int64
	// OffsetDelta is the record's offset relative to the batch's base
	// offset. EncodeBatch numbers records 0, 1, 2 ... when every delta is 0.
	OffsetDelta int32
}

// BatchOptions are the header fields of a batch built by EncodeBatch.
type BatchOptions struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Compression          int8
	ProducerID           int64 // -1 for none
	ProducerEpoch        int16
	BaseSequence         int32
	Transactional        bool
	Control              bool
	// LastOffsetDelta, when > 0, overrides the delta of the last record
	// (compaction keeps a batch's original last offset).
	LastOffsetDelta int32
}

// KV is a key/value record for BuildBatch. A nil Value is a tombstone.
type KV struct {
	Key, Value []byte
}

// BuildBatch encodes kvs as one uncompressed batch at base offset 0 with
// every record stamped timestamp, no producer id, and a correct CRC: the
// raw bytes ParseBatches accepts (group coordinator records, tests).
func BuildBatch(kvs []KV, timestamp int64) ([]byte, error) {
	recs := make([]Record, len(kvs))
	for i, kv := range kvs {
		recs[i] = Record{Key: kv.Key, Value: kv.Value, Timestamp: timestamp}
	}
	b, err := EncodeBatch(BatchOptions{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs)
	return b.Raw, err
}

// EncodeBatch encodes records as one magic-v2 batch with a correct CRC,
// compressed with opts.Compression.
func EncodeBatch(opts BatchOptions, recs []Record) (Batch, error) {
	if len(recs) == 0 {
		return Batch{}, fmt.Errorf("%w: empty batch", ErrInvalidRecord)
	}
	sequential := true
	for _, r := range recs {
		if r.OffsetDelta != 0 {
			sequential = false
			break
		}
	}
	first, maxTs := recs[0].Timestamp, recs[0].Timestamp
	for _, r := range recs {
		maxTs = max(maxTs, r.Timestamp)
	}
	var body []byte
	lastDelta := int32(0)
	for i, r := range recs {
		delta := r.OffsetDelta
		if sequential {
			delta = int32(i)
		}
		lastDelta = delta
		kr := kmsg.Record{
			TimestampDelta64: r.Timestamp - first,
			OffsetDelta:      delta,
			Key:              r.Key,
			Value:            r.Value,
			Headers:          r.Headers,
		}
		// Length is the size of what follows it, known only once encoded.
		enc := kr.AppendTo(nil)
		kr.Length = int32(len(enc) - 1)
		body = kr.AppendTo(body)
	}
	if opts.LastOffsetDelta > lastDelta {
		lastDelta = opts.LastOffsetDelta
	}
	body, err := compress(opts.Compression, body)
	if err != nil {
		return Batch{}, err
	}
	attrs := int16(opts.Compression) & attrCompressionMask
	if opts.Transactional {
		attrs |= attrTransactional
	}
	if opts.Control {
		attrs |= attrControl
	}
	kb := kmsg.RecordBatch{
		FirstOffset:          opts.BaseOffset,
		Length:               int32(minBatchLength + len(body)),
		PartitionLeaderEpoch: opts.PartitionLeaderEpoch,
		Magic:                2,
		Attributes:           attrs,
		LastOffsetDelta:      lastDelta,
		FirstTimestamp:       first,
		MaxTimestamp:         maxTs,
		ProducerID:           opts.ProducerID,
		ProducerEpoch:        opts.ProducerEpoch,
		FirstSequence:        opts.BaseSequence,
		NumRecords:           int32(len(recs)),
		Records:              body,
	}
	raw := kb.AppendTo(make([]byte, 0, BatchHeaderSize+len(body)))
	binary.BigEndian.PutUint32(raw[posCRC:], crc32.Checksum(raw[posAttributes:], castagnoli))
	return Batch{Header: parseHeader(raw), Raw: raw}, nil
}

// RecordTimestamp is a decoded record's timestamp under its batch's
// timestamp type.
func RecordTimestamp(h *BatchHeader, r *kmsg.Record) int64 {
	if h.TimestampTypeIsLogAppend() {
		return h.MaxTimestamp
	}
	return h.FirstTimestamp + r.TimestampDelta64
}
