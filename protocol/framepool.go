package protocol

import (
	"math/bits"
	"sync"
)

// FrameRecycler is implemented by a Handler whose handling of some APIs
// keeps no reference into the request's bytes once the response has left
// (Produce: the log copies the records into the page cache). The frames of
// those requests are reused for later requests instead of being allocated,
// zeroed and garbage-collected each time: at a few thousand produce
// requests a second that is most of the broker's heap traffic.
type FrameRecycler interface {
	RecyclesFrame(key int16) bool
}

// Frames are pooled by power-of-two capacity, from 4 KiB (smaller requests
// are cheap to allocate) to 8 MiB (a frame above that is rare enough to
// leave to the garbage collector).
const (
	minFrameShift = 12
	maxFrameShift = 23
)

// pooledFrame wraps the buffer so that putting it back does not allocate.
type pooledFrame struct{ buf []byte }

type framePool struct {
	classes [maxFrameShift - minFrameShift + 1]sync.Pool
}

// frameClass is the index of the smallest class holding size bytes, or -1
// when size is above every class.
func frameClass(size int) int {
	if size <= 1<<minFrameShift {
		return 0
	}
	shift := bits.Len(uint(size - 1))
	if shift > maxFrameShift {
		return -1
	}
	return shift - minFrameShift
}

// get returns a frame of len size; its contents are garbage, and pf is nil
// when the frame does not come from (and must not go back to) the pool.
func (p *framePool) get(size int) (frame []byte, pf *pooledFrame) {
	c := frameClass(size)
	if c < 0 {
		return make([]byte, size), nil
	}
	pf, _ = p.classes[c].Get().(*pooledFrame)
	if pf == nil {
		pf = &pooledFrame{buf: make([]byte, 1<<(c+minFrameShift))}
	}
	return pf.buf[:size], pf
}

func (p *framePool) put(pf *pooledFrame) {
	if pf == nil {
		return
	}
	p.classes[frameClass(cap(pf.buf))].Put(pf)
}
