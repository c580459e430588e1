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
	if buf[posMagic] != 2 {
		return Batch{}, buf, fmt.Errorf("%w: magic %d", ErrUnsupportedMagic, int8(buf[posMagic]))
	}
	h := parseHeader(buf)
	if crc32.Checksum(buf[posAttributes:], castagnoli) != h.CRC {
		return Batch{}, buf, fmt.Errorf("%w: crc mismatch at position %d", ErrCorruptMessage, pos)
	}
	return Batch{Header: h, Raw: buf}, buf, nil
}
