package producerstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Snapshot files hold a partition's producer table as of an offset, in the
// layout Kafka's ProducerStateManager writes (its ProducerSnapshot message,
// version 1, not flexible), so that Kafka's kafka-dump-log reads ours:
//
//	int16  version (1)
//	uint32 CRC-32C of every byte after this field
//	int32  number of entries, then per entry:
//	       int64 producer id, int16 epoch, int32 last sequence,
//	       int64 last offset, int32 offset delta, int64 timestamp,
//	       int32 coordinator epoch, int64 current txn first offset
//
// Only the producer's last batch is kept (last sequence and offset, and its
// offset delta, from which the first ones follow); -1 marks an entry
// without a batch. docs/producer-snapshots.md names the Kafka sources.
const (
	SnapshotVersion   int16 = 1
	snapshotHeader          = 2 + 4 + 4
	snapshotEntrySize       = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
	crcOffset               = 2
	entriesOffset           = 6
)

// ErrCorruptSnapshot is any snapshot that cannot be trusted: unknown
// version, wrong CRC, short or trailing bytes. Kafka deletes such a file
// and falls back to the snapshot before it; so do we.
var ErrCorruptSnapshot = errors.New("corrupt producer snapshot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// EncodeSnapshot writes entries (the table's Sorted copies) as a snapshot.
func EncodeSnapshot(entries []Producer) []byte {
	buf := make([]byte, snapshotHeader, snapshotHeader+len(entries)*snapshotEntrySize)
	binary.BigEndian.PutUint16(buf, uint16(SnapshotVersion))
	binary.BigEndian.PutUint32(buf[entriesOffset:], uint32(len(entries)))
	for i := range entries {
		p := &entries[i]
		lastSeq, lastOffset, delta := int32(-1), int64(-1), int32(0)
		if n := len(p.Batches); n > 0 {
			m := p.Batches[n-1]
			lastSeq, lastOffset = m.LastSeq, m.LastOffset
			delta = int32(m.LastOffset - m.FirstOffset)
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(p.ID))
		buf = binary.BigEndian.AppendUint16(buf, uint16(p.Epoch))
		buf = binary.BigEndian.AppendUint32(buf, uint32(lastSeq))
		buf = binary.BigEndian.AppendUint64(buf, uint64(lastOffset))
		buf = binary.BigEndian.AppendUint32(buf, uint32(delta))
		buf = binary.BigEndian.AppendUint64(buf, uint64(p.LastTimestamp))
		buf = binary.BigEndian.AppendUint32(buf, uint32(p.CoordinatorEpoch))
		buf = binary.BigEndian.AppendUint64(buf, uint64(p.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(buf[crcOffset:], crc32.Checksum(buf[entriesOffset:], castagnoli))
	return buf
}

// DecodeSnapshot reads a snapshot back into entries, each with at most one
// cached batch (the last one the snapshot names).
func DecodeSnapshot(data []byte) ([]Producer, error) {
	if len(data) < snapshotHeader {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorruptSnapshot, len(data))
	}
	if v := int16(binary.BigEndian.Uint16(data)); v != SnapshotVersion {
		return nil, fmt.Errorf("%w: version %d", ErrCorruptSnapshot, v)
	}
	if want, got := binary.BigEndian.Uint32(data[crcOffset:]), crc32.Checksum(data[entriesOffset:], castagnoli); want != got {
		return nil, fmt.Errorf("%w: stored CRC %d, computed %d", ErrCorruptSnapshot, want, got)
	}
	n := int32(binary.BigEndian.Uint32(data[entriesOffset:]))
	body := data[snapshotHeader:]
	if n < 0 || int64(n)*snapshotEntrySize != int64(len(body)) {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrCorruptSnapshot, n, len(body))
	}
	out := make([]Producer, n)
	for i := range out {
		e := body[i*snapshotEntrySize:]
		p := Producer{
			ID:                    int64(binary.BigEndian.Uint64(e)),
			Epoch:                 int16(binary.BigEndian.Uint16(e[8:])),
			LastTimestamp:         int64(binary.BigEndian.Uint64(e[26:])),
			CoordinatorEpoch:      int32(binary.BigEndian.Uint32(e[34:])),
			CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
		}
		lastSeq := int32(binary.BigEndian.Uint32(e[10:]))
		lastOffset := int64(binary.BigEndian.Uint64(e[14:]))
		delta := int32(binary.BigEndian.Uint32(e[22:]))
		if p.CurrentTxnFirstOffset < 0 {
			p.CurrentTxnFirstOffset = NoOffset
		}
		// Kafka keeps the batch only when the entry has an offset; a delta
		// outside [0, lastOffset] cannot come from an append.
		if lastOffset >= 0 {
			if delta < 0 || int64(delta) > lastOffset {
				return nil, fmt.Errorf("%w: producer %d offset delta %d at offset %d", ErrCorruptSnapshot, p.ID, delta, lastOffset)
			}
			p.Batches = []BatchMetadata{{
				FirstSeq:    subSeq(lastSeq, delta),
				LastSeq:     lastSeq,
				FirstOffset: lastOffset - int64(delta),
				LastOffset:  lastOffset,
				Timestamp:   p.LastTimestamp,
			}}
		}
		out[i] = p
	}
	return out, nil
}

// subSeq is addSeq's inverse, Kafka's DefaultRecordBatch.decrementSequence:
// sequences wrap from MaxInt32 to 0.
func subSeq(seq, delta int32) int32 {
	if seq < delta {
		return math.MaxInt32 - (delta - seq) + 1
	}
	return seq - delta
}
