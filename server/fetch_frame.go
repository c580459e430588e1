package server

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/kbroker/kbroker/logstore"
)

// A fetch response's record data goes from segment files to the socket
// without passing through user space: the response is encoded with kmsg
// (never by hand) with a placeholder of the right length where each
// partition's records go, the placeholders are located in the encoded
// bytes, and WriteTo writes the encoded bytes around them while each
// logstore.ReadResult writes its own range (sendfile for a FileLog on a
// TCP connection).
//
// A placeholder starts with a marker: a per-process random nonce and the
// placeholder's index. The rest of a placeholder is never looked at, so
// placeholders are overlapping windows of one scratch buffer (placeholder
// i starts at i*markerLen); only the bytes between placeholders are
// searched, which is what kmsg itself wrote (lengths, ids, error codes),
// never record data.

const markerLen = 20 // 16-byte nonce + 4-byte index

// frameNonce starts with 0xff, a byte no topic name (the only free text
// kmsg writes into a fetch response besides records) can contain.
var frameNonce = func() [16]byte {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		panic(err)
	}
	n[0] = 0xff
	return n
}()

// frameHole is one placeholder: where it is to be set in the message, and
// the log data that replaces it.
type frameHole struct {
	Slot *[]byte
	Data logstore.ReadResult
	pos  int
}

var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// buildFrame sets every hole's slot to a placeholder, calls encode (which
// must encode the message holding the slots) and returns a frame that
// splices the data into the encoded bytes. Slots are reset to nil.
func buildFrame(holes []frameHole, encode func() []byte) (*fetchFrame, error) {
	need := 0
	for i, h := range holes {
		l := h.Data.Len()
		if l < markerLen {
			return nil, fmt.Errorf("fetch frame: hole %d is %d bytes, below the marker size", i, l)
		}
		need = max(need, i*markerLen+l)
	}
	sp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(sp)
	if cap(*sp) < need {
		*sp = make([]byte, need)
	}
	scratch := (*sp)[:need]
	for i := range holes {
		// Written in order, so placeholder i's marker is intact even though
		// placeholder i-1 covers it: i's marker is the last one written there.
		m := scratch[i*markerLen:]
		copy(m, frameNonce[:])
		binary.BigEndian.PutUint32(m[16:], uint32(i))
	}
	for i := range holes {
		*holes[i].Slot = scratch[i*markerLen : i*markerLen+holes[i].Data.Len()]
	}
	buf := encode()
	for i := range holes {
		*holes[i].Slot = nil
	}
	var marker [markerLen]byte
	copy(marker[:], frameNonce[:])
	from := 0
	total := len(buf)
	for i := range holes {
		binary.BigEndian.PutUint32(marker[16:], uint32(i))
		at := bytes.Index(buf[from:], marker[:])
		if at < 0 {
			return nil, fmt.Errorf("fetch frame: placeholder %d not found", i)
		}
		holes[i].pos = from + at
		from = holes[i].pos + holes[i].Data.Len()
		if from > len(buf) {
			return nil, fmt.Errorf("fetch frame: placeholder %d overruns the message", i)
		}
	}
	return &fetchFrame{buf: buf, holes: holes, n: total}, nil
}

// fetchFrame implements protocol.Frame.
type fetchFrame struct {
	buf   []byte
	holes []frameHole
	n     int
}

func (f *fetchFrame) Len() int { return f.n }

// WriteTo writes the encoded bytes with each placeholder replaced by its
// data. A ReadResult that writes fewer bytes than it promised would shift
// everything after it, so that is an error (the connection is then closed
// by the caller).
func (f *fetchFrame) WriteTo(w io.Writer) (int64, error) {
	var written int64
	off := 0
	for _, h := range f.holes {
		n, err := w.Write(f.buf[off:h.pos])
		written += int64(n)
		if err != nil {
			return written, err
		}
		l := h.Data.Len()
		m, err := h.Data.WriteTo(w)
		written += m
		if err != nil {
			return written, err
		}
		if m != int64(l) {
			return written, fmt.Errorf("fetch frame: log data wrote %d bytes, promised %d", m, l)
		}
		off = h.pos + l
	}
	n, err := w.Write(f.buf[off:])
	written += int64(n)
	return written, err
}
