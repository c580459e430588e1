package logstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"syscall"
)

func (l *FileLog) Read(startOffset, maxOffset int64, maxBytes int, minOneBatch bool) (ReadResult, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	leo := l.logEndOffset()
	if startOffset < l.logStartOffset || startOffset > leo {
		return nil, fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, startOffset, l.logStartOffset, leo)
	}
	res := &fileReadResult{}
	if startOffset == leo || maxOffset <= startOffset {
		return res, nil
	}
	remaining := int64(maxBytes)
	for i := l.segmentFor(startOffset); i < len(l.segments); i++ {
		done, err := l.segments[i].read(res, startOffset, maxOffset, &remaining, minOneBatch)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	return res, nil
}

// read adds to res the batches of this segment from the one holding
// startOffset on; done reports that the read is complete (size or
// maxOffset reached). Batch boundaries are found through the offset index
// and a short header scan, so a large read does not walk every batch.
func (s *segment) read(res *fileReadResult, startOffset, maxOffset int64, remaining *int64, minOneBatch bool) (done bool, err error) {
	pos := int64(0)
	if startOffset > s.baseOffset {
		pos = s.index.lookup(startOffset)
	}
	sc := newHeaderScanner(s.log, s.size)
	defer sc.release()
	var first BatchHeader
	for {
		h, err := sc.header(pos)
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		if h.LastOffset() >= startOffset {
			first = h
			break
		}
		pos += int64(h.Size())
	}
	if first.BaseOffset >= maxOffset {
		return true, nil
	}
	firstSize := int64(first.Size())
	if firstSize > *remaining {
		if minOneBatch && res.n == 0 {
			res.add(s.log, pos, firstSize)
			*remaining = 0
		}
		return true, nil
	}
	// limit: where maxOffset cuts the segment (the first batch at or above it).
	limit := s.size
	if maxOffset < s.nextOffset {
		if limit, err = s.firstBatchFrom(sc, max(pos, s.index.lookup(maxOffset)), maxOffset); err != nil {
			return true, err
		}
	}
	budgetEnd := pos + *remaining
	if limit <= budgetEnd {
		res.add(s.log, pos, limit-pos)
		*remaining -= limit - pos
		return limit < s.size, nil
	}
	end, err := s.lastBoundaryWithin(sc, pos, budgetEnd)
	if err != nil {
		return true, err
	}
	res.add(s.log, pos, end-pos)
	*remaining -= end - pos
	return true, nil
}

// firstBatchFrom scans from the batch at pos to the first batch whose base
// offset is >= offset and returns its position (the segment size if none).
func (s *segment) firstBatchFrom(sc *headerScanner, pos, offset int64) (int64, error) {
	for {
		h, err := sc.header(pos)
		if err == io.EOF {
			return s.size, nil
		}
		if err != nil {
			return 0, err
		}
		if h.BaseOffset >= offset {
			return pos, nil
		}
		pos += int64(h.Size())
	}
}

// lastBoundaryWithin returns the end of the last whole batch that ends at
// or before end, scanning from the closest index entry (at or after from).
func (s *segment) lastBoundaryWithin(sc *headerScanner, from, end int64) (int64, error) {
	i := sort.Search(len(s.index.pos), func(i int) bool { return int64(s.index.pos[i]) > end })
	q := from
	if i > 0 && int64(s.index.pos[i-1]) > from {
		q = int64(s.index.pos[i-1])
	}
	for {
		h, err := sc.header(q)
		if err == io.EOF {
			return q, nil
		}
		if err != nil {
			return 0, err
		}
		if q+int64(h.Size()) > end {
			return q, nil
		}
		q += int64(h.Size())
	}
}

// fileRange is a run of whole batches in a segment file.
type fileRange struct {
	f   *os.File
	pos int64
	n   int64
}

// fileReadResult refers to segment files instead of holding their bytes.
// Reads use explicit offsets (pread, sendfile with an offset), so concurrent
// results never share a file position.
type fileReadResult struct {
	ranges []fileRange
	n      int64
}

func (r *fileReadResult) add(f *os.File, pos, n int64) {
	if k := len(r.ranges); k > 0 && r.ranges[k-1].f == f && r.ranges[k-1].pos+r.ranges[k-1].n == pos {
		r.ranges[k-1].n += n
	} else {
		r.ranges = append(r.ranges, fileRange{f: f, pos: pos, n: n})
	}
	r.n += n
}

func (r *fileReadResult) Len() int { return int(r.n) }

func (r *fileReadResult) Bytes() ([]byte, error) {
	out := make([]byte, r.n)
	off := 0
	for _, rg := range r.ranges {
		if _, err := rg.f.ReadAt(out[off:off+int(rg.n)], rg.pos); err != nil {
			return nil, err
		}
		off += int(rg.n)
	}
	return out, nil
}

func (r *fileReadResult) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for _, rg := range r.ranges {
		n, err := writeRange(w, rg)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// writeRange hands a file range to the kernel with sendfile when w is a
// socket, else copies it through a SectionReader.
func writeRange(w io.Writer, rg fileRange) (int64, error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return io.Copy(w, io.NewSectionReader(rg.f, rg.pos, rg.n))
	}
	dst, err := sc.SyscallConn()
	if err != nil {
		return io.Copy(w, io.NewSectionReader(rg.f, rg.pos, rg.n))
	}
	src, err := rg.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var written int64
	var opErr error
	// Control keeps the file descriptor alive (not closed underneath us)
	// while the socket's Write loop waits for writability on EAGAIN.
	ctlErr := src.Control(func(srcFd uintptr) {
		off := rg.pos
		end := rg.pos + rg.n
		werr := dst.Write(func(dstFd uintptr) bool {
			for off < end {
				n, err := syscall.Sendfile(int(dstFd), int(srcFd), &off, int(min(end-off, 1<<30)))
				if n > 0 {
					written += int64(n)
				}
				switch {
				case err == syscall.EAGAIN:
					return false // wait until the socket is writable
				case err == syscall.EINTR:
					continue
				case err != nil:
					opErr = err
					return true
				case n == 0:
					opErr = io.ErrUnexpectedEOF // the file shrank (truncation)
					return true
				}
			}
			return true
		})
		if opErr == nil {
			opErr = werr
		}
	})
	if ctlErr != nil {
		return written, ctlErr
	}
	if errors.Is(opErr, syscall.EINVAL) && written == 0 {
		// Not a socket sendfile supports; fall back to copying.
		return io.Copy(w, io.NewSectionReader(rg.f, rg.pos, rg.n))
	}
	return written, opErr
}
