package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// BatchHeaderSize is the size of a magic-v2 record batch header, from
// baseOffset up to and including recordCount (DefaultRecordBatch.java).
const BatchHeaderSize = 61

// minBatchLength is the smallest legal batchLength: the header without the
// 12-byte baseOffset+batchLength prefix.
const minBatchLength = BatchHeaderSize - 12

// Byte positions inside a batch (DefaultRecordBatch.java's *_OFFSET).
const (
	posBatchLength  = 8
	posLeaderEpoch  = 12
	posMagic        = 16
	posCRC          = 17
	posAttributes   = 21
	posLastOffDelta = 23
	posFirstTs      = 27
	posMaxTs        = 35
	posProducerID   = 43
	posProducerEp   = 51
	posBaseSequence = 53
	posNumRecords   = 57
)

// Attribute bits of a v2 batch.
const (
	attrCompressionMask   = 0x07
	attrTimestampType     = 0x08
	attrTransactional     = 0x10
	attrControl           = 0x20
	attrDeleteHorizonFlag = 0x40
)

// Compression codecs as stored in the attribute bits.
const (
	CompressionNone   int8 = 0
	CompressionGzip   int8 = 1
	CompressionSnappy int8 = 2
	CompressionLZ4    int8 = 3
	CompressionZstd   int8 = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BatchHeader is the fixed part of a magic-v2 record batch.
type BatchHeader struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// LastOffset is the offset of the batch's last record, also after compaction
// removed records (lastOffsetDelta is kept for that reason).
func (h *BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the codec id from the attribute bits.
func (h *BatchHeader) Compression() int8 { return int8(h.Attributes & attrCompressionMask) }

func (h *BatchHeader) IsTransactional() bool { return h.Attributes&attrTransactional != 0 }

func (h *BatchHeader) IsControl() bool { return h.Attributes&attrControl != 0 }

// TimestampTypeIsLogAppend reports message.timestamp.type=LogAppendTime:
// then every record's timestamp is the batch's MaxTimestamp.
func (h *BatchHeader) TimestampTypeIsLogAppend() bool { return h.Attributes&attrTimestampType != 0 }

// Size is the batch's total size in bytes, prefix included.
func (h *BatchHeader) Size() int { return int(h.BatchLength) + 12 }

// Batch is one record batch: its parsed header and its raw bytes, the
// 12-byte baseOffset+batchLength prefix included, exactly as stored on disk.
type Batch struct {
	Header BatchHeader
	Raw    []byte
}

// parseHeader decodes the header of a batch starting at b[0]; b must hold at
// least BatchHeaderSize bytes.
func parseHeader(b []byte) BatchHeader {
	be := binary.BigEndian
	return BatchHeader{
		BaseOffset:           int64(be.Uint64(b[0:])),
		BatchLength:          int32(be.Uint32(b[posBatchLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[posLeaderEpoch:])),
		Magic:                int8(b[posMagic]),
		CRC:                  be.Uint32(b[posCRC:]),
		Attributes:           int16(be.Uint16(b[posAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[posLastOffDelta:])),
		FirstTimestamp:       int64(be.Uint64(b[posFirstTs:])),
		MaxTimestamp:         int64(be.Uint64(b[posMaxTs:])),
		ProducerID:           int64(be.Uint64(b[posProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[posProducerEp:])),
		BaseSequence:         int32(be.Uint32(b[posBaseSequence:])),
		NumRecords:           int32(be.Uint32(b[posNumRecords:])),
	}
}

// PeekBatchHeader reads the header of the first batch in buf without
// checking it (ParseBatches does, later): enough to route a request by
// its producer before validating it. false when buf is too short or not
// magic v2.
func PeekBatchHeader(buf []byte) (BatchHeader, bool) {
	if len(buf) < BatchHeaderSize {
		return BatchHeader{}, false
	}
	h := parseHeader(buf)
	return h, h.Magic == 2
}

// ParseBatches splits a produce request's records bytes into batches. It
// checks framing, magic, CRC and the record count but decodes no record: this
// is the produce hot path. A trailing partial batch is corrupt here (unlike a
// fetch response, where brokers may cut the last batch).
func ParseBatches(buf []byte) ([]Batch, error) {
	var out []Batch
	for len(buf) > 0 {
		b, err := checkBatch(buf)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		buf = buf[len(b.Raw):]
	}
	return out, nil
}

// checkBatch validates the batch at the start of buf and returns it.
func checkBatch(buf []byte) (Batch, error) {
	if len(buf) < 12 {
		return Batch{}, fmt.Errorf("%w: %d trailing bytes", ErrCorruptMessage, len(buf))
	}
	length := int32(binary.BigEndian.Uint32(buf[posBatchLength:]))
	if length < minBatchLength {
		return Batch{}, fmt.Errorf("%w: batch length %d below minimum %d", ErrCorruptMessage, length, minBatchLength)
	}
	if int64(length)+12 > int64(len(buf)) {
		return Batch{}, fmt.Errorf("%w: batch length %d exceeds the %d bytes left", ErrCorruptMessage, length, len(buf)-12)
	}
	raw := buf[:12+int(length)]
	if magic := int8(raw[posMagic]); magic != 2 {
		return Batch{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, magic)
	}
	h := parseHeader(raw)
	if got := crc32.Checksum(raw[posAttributes:], castagnoli); got != h.CRC {
		return Batch{}, fmt.Errorf("%w: crc %08x, computed %08x", ErrCorruptMessage, h.CRC, got)
	}
	if h.NumRecords < 0 || h.LastOffsetDelta < 0 {
		return Batch{}, fmt.Errorf("%w: record count %d, last offset delta %d", ErrCorruptMessage, h.NumRecords, h.LastOffsetDelta)
	}
	// Compaction may leave gaps, so only more records than offsets is wrong.
	if h.Compression() == CompressionNone && !h.IsControl() && int64(h.NumRecords) > int64(h.LastOffsetDelta)+1 {
		return Batch{}, fmt.Errorf("%w: %d records for last offset delta %d", ErrInvalidRecord, h.NumRecords, h.LastOffsetDelta)
	}
	return Batch{Header: h, Raw: raw}, nil
}

// setBaseOffset rewrites the base offset in place; it is outside the CRC.
func (b *Batch) setBaseOffset(off int64) {
	binary.BigEndian.PutUint64(b.Raw[0:], uint64(off))
	b.Header.BaseOffset = off
}

// setLeaderEpoch stamps partitionLeaderEpoch in place; it is outside the CRC.
func (b *Batch) setLeaderEpoch(epoch int32) {
	binary.BigEndian.PutUint32(b.Raw[posLeaderEpoch:], uint32(epoch))
	b.Header.PartitionLeaderEpoch = epoch
}

// setLogAppendTime applies message.timestamp.type=LogAppendTime: the batch's
// maxTimestamp becomes ts and the timestamp-type bit is set. Both are inside
// the CRC, so it is recomputed.
func (b *Batch) setLogAppendTime(ts int64) {
	be := binary.BigEndian
	attrs := b.Header.Attributes | attrTimestampType
	be.PutUint16(b.Raw[posAttributes:], uint16(attrs))
	be.PutUint64(b.Raw[posMaxTs:], uint64(ts))
	crc := crc32.Checksum(b.Raw[posAttributes:], castagnoli)
	be.PutUint32(b.Raw[posCRC:], crc)
	b.Header.Attributes = attrs
	b.Header.MaxTimestamp = ts
	b.Header.CRC = crc
}
