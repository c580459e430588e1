package logstore

import (
	"encoding/binary"
	"errors"
	"os"
	"sort"
)

const (
	offsetIndexEntrySize = 8
	timeIndexEntrySize   = 12
)

// offsetIndex is a segment's `.index` file (OffsetIndex.java): sparse
// entries (relative offset, position), kept in memory, where every lookup
// is served, and written to the file, which is preallocated to its maximum
// size while the segment is active and trimmed when it rolls or closes.
// The owning log's lock guards it.
//
// Entries reach the file indexWriteBatch at a time, and at every flush,
// roll and close (writePending): one write per entry was two extra
// syscalls per produced batch. Entries still pending when the process dies
// belong to data after the recovery point, which an unclean start recovers
// and re-indexes anyway; a short index is only ever sparser, never wrong.
type offsetIndex struct {
	f          *os.File
	baseOffset int64
	maxEntries int
	rel        []int32
	pos        []int32
	// written is how many entries the file holds.
	written int
}

// timeIndex is a segment's `.timeindex` file (TimeIndex.java), written
// like offsetIndex.
type timeIndex struct {
	f          *os.File
	baseOffset int64
	maxEntries int
	ts         []int64
	rel        []int32
	written    int
}

// indexWriteBatch is how many entries an index holds back before writing
// them: 64 entries cover 256 KiB of log at the default
// log.index.interval.bytes.
const indexWriteBatch = 64

func (x *offsetIndex) full() bool { return len(x.rel) >= x.maxEntries }

func (x *offsetIndex) append(offset int64, position int64) error {
	if x.full() {
		return errors.New("offset index full")
	}
	rel := int32(offset - x.baseOffset)
	if n := len(x.rel); n > 0 && rel <= x.rel[n-1] {
		return nil // never regress; the log may re-index after recovery
	}
	x.rel = append(x.rel, rel)
	x.pos = append(x.pos, int32(position))
	if len(x.rel)-x.written >= indexWriteBatch {
		return x.writePending()
	}
	return nil
}

// writePending writes the entries the file does not hold yet, in one write.
func (x *offsetIndex) writePending() error {
	err := writeEntries(x.f, x.written, len(x.rel), offsetIndexEntrySize, func(b []byte, i int) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(x.rel[i]))
		return binary.BigEndian.AppendUint32(b, uint32(x.pos[i]))
	})
	if err == nil {
		x.written = len(x.rel)
	}
	return err
}

// writeEntries writes entries [from, to) of an index with entries of size
// bytes at their place in f, in one write; put appends entry i to b.
func writeEntries(f *os.File, from, to, size int, put func(b []byte, i int) []byte) error {
	if to <= from {
		return nil
	}
	buf := make([]byte, 0, (to-from)*size)
	for i := from; i < to; i++ {
		buf = put(buf, i)
	}
	_, err := f.WriteAt(buf, int64(from)*int64(size))
	return err
}

// lookup returns the position of the largest entry whose offset is <=
// offset, or 0 (the segment's start) when there is none.
func (x *offsetIndex) lookup(offset int64) int64 {
	if offset-x.baseOffset > 1<<31-1 {
		offset = x.baseOffset + 1<<31 - 1
	}
	rel := int32(offset - x.baseOffset)
	i := sort.Search(len(x.rel), func(i int) bool { return x.rel[i] > rel })
	if i == 0 {
		return 0
	}
	return int64(x.pos[i-1])
}

// truncateToPosition drops entries pointing at or past pos.
func (x *offsetIndex) truncateToPosition(pos int64) error {
	i := sort.Search(len(x.pos), func(i int) bool { return int64(x.pos[i]) >= pos })
	return x.truncateEntries(i)
}

func (x *offsetIndex) truncateEntries(n int) error {
	x.rel, x.pos = x.rel[:n], x.pos[:n]
	x.written = min(x.written, n)
	// Zero the tail so a reopen after a crash does not read stale entries.
	return zeroFrom(x.f, int64(n)*offsetIndexEntrySize)
}

// trim shrinks the file to its entries (segment rolled or closed).
func (x *offsetIndex) trim() error {
	if err := x.writePending(); err != nil {
		return err
	}
	return x.f.Truncate(int64(len(x.rel)) * offsetIndexEntrySize)
}

// preallocate grows the file to maxEntries (segment active again).
func (x *offsetIndex) preallocate() error {
	return x.f.Truncate(int64(x.maxEntries) * offsetIndexEntrySize)
}

func (x *timeIndex) full() bool { return len(x.ts) >= x.maxEntries }

func (x *timeIndex) lastTimestamp() int64 {
	if len(x.ts) == 0 {
		return -1
	}
	return x.ts[len(x.ts)-1]
}

// maybeAppend adds (ts, offset) when ts is larger than the last entry's:
// time index timestamps are monotonic.
func (x *timeIndex) maybeAppend(ts, offset int64, skipFullCheck bool) error {
	if ts <= x.lastTimestamp() {
		return nil
	}
	if x.full() && !skipFullCheck {
		return errors.New("time index full")
	}
	x.ts = append(x.ts, ts)
	x.rel = append(x.rel, int32(offset-x.baseOffset))
	if len(x.ts)-x.written >= indexWriteBatch {
		return x.writePending()
	}
	return nil
}

func (x *timeIndex) writePending() error {
	err := writeEntries(x.f, x.written, len(x.ts), timeIndexEntrySize, func(b []byte, i int) []byte {
		b = binary.BigEndian.AppendUint64(b, uint64(x.ts[i]))
		return binary.BigEndian.AppendUint32(b, uint32(x.rel[i]))
	})
	if err == nil {
		x.written = len(x.ts)
	}
	return err
}

// lookup returns the offset of the largest entry whose timestamp is <= ts,
// or the base offset when there is none.
func (x *timeIndex) lookup(ts int64) int64 {
	i := sort.Search(len(x.ts), func(i int) bool { return x.ts[i] > ts })
	if i == 0 {
		return x.baseOffset
	}
	return x.baseOffset + int64(x.rel[i-1])
}

// truncateToOffset drops entries at or past offset.
func (x *timeIndex) truncateToOffset(offset int64) error {
	i := sort.Search(len(x.rel), func(i int) bool { return x.baseOffset+int64(x.rel[i]) >= offset })
	x.ts, x.rel = x.ts[:i], x.rel[:i]
	x.written = min(x.written, i)
	return zeroFrom(x.f, int64(i)*timeIndexEntrySize)
}

func (x *timeIndex) trim() error {
	if err := x.writePending(); err != nil {
		return err
	}
	return x.f.Truncate(int64(len(x.ts)) * timeIndexEntrySize)
}

func (x *timeIndex) preallocate() error {
	// One extra entry: maybeAppend with skipFullCheck at roll may add it.
	return x.f.Truncate(int64(x.maxEntries+1) * timeIndexEntrySize)
}

func zeroFrom(f *os.File, off int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if err := f.Truncate(off); err != nil {
		return err
	}
	if size > off {
		return f.Truncate(size)
	}
	return nil
}

// loadOffsetIndex reads an existing index file and checks it against the
// segment: strictly increasing offsets and positions below logSize. Zero
// entries after the first mark a preallocated tail (crash before trim) and
// end the index. A false ok means it must be rebuilt.
func loadOffsetIndex(data []byte, base, logSize int64) (rel, pos []int32, ok bool) {
	if len(data)%offsetIndexEntrySize != 0 {
		return nil, nil, false
	}
	for i := 0; i+offsetIndexEntrySize <= len(data); i += offsetIndexEntrySize {
		r := int32(binary.BigEndian.Uint32(data[i:]))
		p := int32(binary.BigEndian.Uint32(data[i+4:]))
		if r == 0 && p == 0 {
			break
		}
		if r < 0 || p < 0 || int64(p) >= logSize {
			return nil, nil, false
		}
		if n := len(rel); n > 0 && (r <= rel[n-1] || p <= pos[n-1]) {
			return nil, nil, false
		}
		rel, pos = append(rel, r), append(pos, p)
	}
	return rel, pos, true
}

func loadTimeIndex(data []byte, nextOffset, base int64) (ts []int64, rel []int32, ok bool) {
	if len(data)%timeIndexEntrySize != 0 {
		return nil, nil, false
	}
	for i := 0; i+timeIndexEntrySize <= len(data); i += timeIndexEntrySize {
		t := int64(binary.BigEndian.Uint64(data[i:]))
		r := int32(binary.BigEndian.Uint32(data[i+8:]))
		if t == 0 && r == 0 {
			break
		}
		if r < 0 || base+int64(r) >= nextOffset {
			return nil, nil, false
		}
		if n := len(ts); n > 0 && (t <= ts[n-1] || r < rel[n-1]) {
			return nil, nil, false
		}
		ts, rel = append(ts, t), append(rel, r)
	}
	return ts, rel, true
}

func indexEntries(maxIndexBytes, entrySize int) int {
	n := maxIndexBytes / entrySize
	if n < 1 {
		return 1
	}
	return n
}
