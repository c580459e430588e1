package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// AbortedTxn is one entry of a segment's transaction index (Kafka's
// AbortedTxn.java): an aborted transaction of ProducerID spanning
// [FirstOffset, LastOffset], LastOffset being its abort marker's offset,
// and the last stable offset just after the marker (the first offset of
// the oldest other transaction still ongoing then, or LastOffset + 1).
// A read_committed consumer gets ProducerID and FirstOffset of every one
// that overlaps its fetch, to skip those records.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// txnIndexSuffix names a segment's transaction index, `<base>.txnindex`.
const txnIndexSuffix = ".txnindex"

// abortedTxnSize is one entry: int16 version (0), int64 producer id,
// int64 first offset, int64 last offset, int64 last stable offset, big
// endian (AbortedTxn.TOTAL_SIZE).
const abortedTxnSize = 2 + 8 + 8 + 8 + 8

// ErrCorruptTxnIndex is a transaction index that cannot be read: an entry
// of an unknown version or out of order. The segment is recovered then,
// which rebuilds it.
var ErrCorruptTxnIndex = errors.New("corrupt transaction index")

func (a AbortedTxn) appendTo(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(a.ProducerID))
	b = binary.BigEndian.AppendUint64(b, uint64(a.FirstOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(a.LastOffset))
	return binary.BigEndian.AppendUint64(b, uint64(a.LastStableOffset))
}

// DecodeTxnIndex reads a .txnindex file. A partial entry at the end is
// ignored, as Kafka's TransactionIndex iterator ignores it (a torn last
// write); a version other than 0, or last offsets that do not increase
// (TransactionIndex.append refuses those), are corrupt.
func DecodeTxnIndex(data []byte) ([]AbortedTxn, error) {
	n := len(data) / abortedTxnSize
	out := make([]AbortedTxn, 0, n)
	for i := 0; i < n; i++ {
		e := data[i*abortedTxnSize:]
		if v := int16(binary.BigEndian.Uint16(e)); v != 0 {
			return nil, fmt.Errorf("%w: entry %d version %d", ErrCorruptTxnIndex, i, v)
		}
		a := AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		}
		if len(out) > 0 && a.LastOffset <= out[len(out)-1].LastOffset {
			return nil, fmt.Errorf("%w: entry %d last offset %d after %d", ErrCorruptTxnIndex, i, a.LastOffset, out[len(out)-1].LastOffset)
		}
		out = append(out, a)
	}
	return out, nil
}

// txnIndex is a segment's transaction index. Its entries are kept in
// memory (34 bytes per aborted transaction); the file is created only at
// the first entry, as Kafka creates it lazily, so segments without
// aborted transactions have none. The log's lock guards it.
type txnIndex struct {
	path    string
	f       *os.File // nil until the first entry, or when no file exists
	entries []AbortedTxn
}

func newTxnIndex(dir string, base int64, suffix string) txnIndex {
	return txnIndex{path: segmentName(dir, base, txnIndexSuffix+suffix)}
}

// load reads the file if there is one; baseOffset is the segment's, below
// which no entry may end (TransactionIndex.sanityCheck).
func (x *txnIndex) load(baseOffset int64) error {
	data, err := os.ReadFile(x.path)
	if errors.Is(err, fs.ErrNotExist) {
		x.entries = nil
		return nil
	}
	if err != nil {
		return err
	}
	entries, err := DecodeTxnIndex(data)
	if err != nil {
		return err
	}
	if len(entries) > 0 && entries[0].LastOffset < baseOffset {
		return fmt.Errorf("%w: entry ends at %d below segment %d", ErrCorruptTxnIndex, entries[0].LastOffset, baseOffset)
	}
	x.entries = entries
	return x.open()
}

func (x *txnIndex) open() error {
	if x.f != nil {
		return nil
	}
	f, err := os.OpenFile(x.path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	x.f = f
	return nil
}

// append writes one entry at the end.
func (x *txnIndex) append(a AbortedTxn) error {
	if n := len(x.entries); n > 0 && a.LastOffset <= x.entries[n-1].LastOffset {
		return fmt.Errorf("transaction index %s: last offset %d not after %d", x.path, a.LastOffset, x.entries[n-1].LastOffset)
	}
	if err := x.open(); err != nil {
		return err
	}
	if _, err := x.f.WriteAt(a.appendTo(nil), int64(len(x.entries))*abortedTxnSize); err != nil {
		return err
	}
	x.entries = append(x.entries, a)
	return nil
}

// truncateTo drops the entries whose marker is at or above offset
// (TransactionIndex.truncateTo).
func (x *txnIndex) truncateTo(offset int64) error {
	n := len(x.entries)
	for n > 0 && x.entries[n-1].LastOffset >= offset {
		n--
	}
	if n == len(x.entries) {
		return nil
	}
	x.entries = x.entries[:n]
	return x.f.Truncate(int64(n) * abortedTxnSize)
}

// reset empties the index before a recovery rebuilds it.
func (x *txnIndex) reset() error {
	x.entries = nil
	if x.f == nil {
		err := os.Remove(x.path)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return err
	}
	return x.f.Truncate(0)
}

// collect adds to out the entries that overlap [fetchOffset,
// upperBoundOffset) and reports whether the search is complete: an entry
// whose last stable offset reaches the upper bound means no later
// segment can hold an overlapping one (TransactionIndex.collectAbortedTxns).
func (x *txnIndex) collect(out []AbortedTxn, fetchOffset, upperBoundOffset int64) ([]AbortedTxn, bool) {
	for _, a := range x.entries {
		if a.LastOffset >= fetchOffset && a.FirstOffset < upperBoundOffset {
			out = append(out, a)
		}
		if a.LastStableOffset >= upperBoundOffset {
			return out, true
		}
	}
	return out, false
}

func (x *txnIndex) sync() error {
	if x.f == nil {
		return nil
	}
	return x.f.Sync()
}

func (x *txnIndex) close() error {
	if x.f == nil {
		return nil
	}
	err := x.f.Close()
	x.f = nil
	return err
}
