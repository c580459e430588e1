package logstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
)

// scanChunk is how much of a segment one pread brings in while walking
// batch headers: a fetch of many small batches then costs a few reads.
const scanChunk = 64 << 10

var scanBufs = sync.Pool{New: func() any { b := make([]byte, scanChunk); return &b }}

// headerScanner walks batch headers of a segment file without decoding
// records. It reads through a chunk buffer; batches larger than the chunk
// cost one read for their header.
type headerScanner struct {
	f      *os.File
	end    int64 // bytes of the file that belong to the segment
	bufp   *[]byte
	buf    []byte
	bufPos int64
}

func newHeaderScanner(f *os.File, end int64) *headerScanner {
	bp := scanBufs.Get().(*[]byte)
	return &headerScanner{f: f, end: end, bufp: bp, bufPos: -1}
}

func (s *headerScanner) release() {
	if s.bufp != nil {
		scanBufs.Put(s.bufp)
		s.bufp, s.buf = nil, nil
	}
}

// header returns the header of the batch at pos, checking only that the
// batch's framing fits the segment. io.EOF means pos is the segment's end;
// errTornBatch a partial or bogus batch there.
func (s *headerScanner) header(pos int64) (BatchHeader, error) {
	if pos >= s.end {
		return BatchHeader{}, io.EOF
	}
	if s.end-pos < BatchHeaderSize {
		return BatchHeader{}, errTornBatch
	}
	if s.bufPos < 0 || pos < s.bufPos || pos+BatchHeaderSize > s.bufPos+int64(len(s.buf)) {
		n := min(int64(len(*s.bufp)), s.end-pos)
		m, err := s.f.ReadAt((*s.bufp)[:n], pos)
		if int64(m) < BatchHeaderSize {
			if err == nil || err == io.EOF {
				err = errTornBatch
			}
			return BatchHeader{}, err
		}
		s.buf, s.bufPos = (*s.bufp)[:m], pos
	}
	h := parseHeader(s.buf[pos-s.bufPos:])
	if h.BatchLength < minBatchLength || pos+int64(h.Size()) > s.end {
		return h, errTornBatch
	}
	return h, nil
}

var errTornBatch = fmt.Errorf("%w: torn or bogus batch", ErrCorruptMessage)

// readBatchAt reads the whole batch at pos into buf (grown as needed) and
// validates it like ParseBatches does, plus the framing against end.
func readBatchAt(f *os.File, pos, end int64, buf []byte) (Batch, []byte, error) {
	if end-pos < 12 {
		return Batch{}, buf, errTornBatch
	}
	var pre [12]byte
	if _, err := f.ReadAt(pre[:], pos); err != nil {
		return Batch{}, buf, err
	}
	length := int64(int32(binary.BigEndian.Uint32(pre[8:])))
	if length < minBatchLength || pos+12+length > end {
		return Batch{}, buf, errTornBatch
	}
	size := int(12 + length)
	if cap(buf) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := f.ReadAt(buf, pos); err != nil {
		return Batch{}, buf, err
	}
	b, err := checkBatchAt(buf, pos)
	return b, buf, err
}

// checkBatchAt validates the batch raw, read from position pos, as
// ParseBatches does: magic 2 and the CRC.
func checkBatchAt(raw []byte, pos int64) (Batch, error) {
	if raw[posMagic] != 2 {
		return Batch{}, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, int8(raw[posMagic]))
	}
	h := parseHeader(raw)
	if crc32.Checksum(raw[posAttributes:], castagnoli) != h.CRC {
		return Batch{}, fmt.Errorf("%w: crc mismatch at position %d", ErrCorruptMessage, pos)
	}
	return Batch{Header: h, Raw: raw}, nil
}

// batch reads and validates the whole batch at pos, as readBatchAt does,
// but through the scanner's chunk: walking a segment of small batches
// (recovery) costs a read per chunk instead of two per batch. A batch
// larger than the chunk is read into big. The batch's Raw is valid until
// the next call.
func (s *headerScanner) batch(pos int64, big []byte) (Batch, []byte, error) {
	if s.end-pos < 12 {
		return Batch{}, big, errTornBatch
	}
	if !s.holds(pos, 12) {
		if err := s.fill(pos); err != nil {
			return Batch{}, big, err
		}
		if !s.holds(pos, 12) {
			return Batch{}, big, errTornBatch
		}
	}
	length := int64(int32(binary.BigEndian.Uint32(s.buf[pos-s.bufPos+8:])))
	if length < minBatchLength || pos+12+length > s.end {
		return Batch{}, big, errTornBatch
	}
	size := 12 + length
	if size > int64(len(*s.bufp)) {
		b, big, err := readBatchAt(s.f, pos, s.end, big)
		return b, big, err
	}
	if !s.holds(pos, size) {
		if err := s.fill(pos); err != nil {
			return Batch{}, big, err
		}
		if !s.holds(pos, size) {
			return Batch{}, big, errTornBatch
		}
	}
	b, err := checkBatchAt(s.buf[pos-s.bufPos:pos-s.bufPos+size], pos)
	return b, big, err
}

// holds reports whether the chunk in hand covers [pos, pos+n).
func (s *headerScanner) holds(pos, n int64) bool {
	return s.bufPos >= 0 && pos >= s.bufPos && pos+n <= s.bufPos+int64(len(s.buf))
}

// fill reads the chunk starting at pos.
func (s *headerScanner) fill(pos int64) error {
	n := min(int64(len(*s.bufp)), s.end-pos)
	m, err := s.f.ReadAt((*s.bufp)[:n], pos)
	if err != nil && err != io.EOF {
		return err
	}
	s.buf, s.bufPos = (*s.bufp)[:m], pos
	return nil
}
