package server

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/kbroker/kbroker/logstore"
)

// A fetch response's record data goes from segment files to the socket
// without passing through user space: the response is encoded with kmsg
// (never by hand) with a small placeholder where each partition's records
// go, the placeholders are located in the encoded bytes, and WriteTo writes
// the encoded bytes around them — with each placeholder's length prefix
// rewritten to the real length — while each logstore.ReadResult writes its
// own range (sendfile for a FileLog on a TCP connection). Nothing
// proportional to the record data is allocated, copied or zeroed.
//
// A placeholder is a marker: a per-process random nonce and the
// placeholder's index. Only the bytes between placeholders are searched,
// which is what kmsg itself wrote (lengths, ids, error codes).

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
	pos  int // of the placeholder's length prefix in the encoded bytes
}

// buildFrame sets every hole's slot to a marker, calls encode (which must
// encode the message holding the slots) and returns a frame that splices
// the data into the encoded bytes. flexible says how the records' length
// is encoded: a compact uvarint of length+1 (flexible versions, Fetch
// v12+) or an int32. Slots are reset to nil.
func buildFrame(holes []frameHole, flexible bool, encode func() []byte) (*fetchFrame, error) {
	markers := make([]byte, len(holes)*markerLen)
	for i := range holes {
		m := markers[i*markerLen : (i+1)*markerLen]
		copy(m, frameNonce[:])
		binary.BigEndian.PutUint32(m[16:], uint32(i))
		*holes[i].Slot = m
	}
	buf := encode()
	for i := range holes {
		*holes[i].Slot = nil
	}
	markerPrefix := lengthPrefix(nil, markerLen, flexible)
	prefixLen := len(markerPrefix)
	var prefix [binary.MaxVarintLen64]byte
	from := 0
	total := len(buf)
	for i := range holes {
		marker := markers[i*markerLen : (i+1)*markerLen]
		at := bytes.Index(buf[from:], marker)
		if at < 0 {
			return nil, fmt.Errorf("fetch frame: placeholder %d not found", i)
		}
		at += from
		if at < prefixLen || !bytes.Equal(buf[at-prefixLen:at], markerPrefix) {
			return nil, fmt.Errorf("fetch frame: placeholder %d without its length prefix", i)
		}
		holes[i].pos = at - prefixLen
		from = at + markerLen
		l := holes[i].Data.Len()
		total += len(lengthPrefix(prefix[:0], l, flexible)) + l - prefixLen - markerLen
	}
	return &fetchFrame{buf: buf, holes: holes, n: total, flexible: flexible, prefixLen: prefixLen}, nil
}

// lengthPrefix appends how kmsg encodes the length of a non-null byte
// field of n bytes.
func lengthPrefix(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return binary.AppendUvarint(dst, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// fetchFrame implements protocol.Frame.
type fetchFrame struct {
	buf       []byte
	holes     []frameHole
	n         int
	flexible  bool
	prefixLen int
}

func (f *fetchFrame) Len() int { return f.n }

// WriteTo writes the encoded bytes with each placeholder replaced by its
// data. A ReadResult that writes fewer bytes than it promised would shift
// everything after it, so that is an error (the connection is then closed
// by the caller).
func (f *fetchFrame) WriteTo(w io.Writer) (int64, error) {
	var written int64
	off := 0
	var prefix [binary.MaxVarintLen64]byte
	for _, h := range f.holes {
		l := h.Data.Len()
		head := append(f.buf[off:h.pos:h.pos], lengthPrefix(prefix[:0], l, f.flexible)...)
		n, err := w.Write(head)
		written += int64(n)
		if err != nil {
			return written, err
		}
		m, err := h.Data.WriteTo(w)
		written += m
		if err != nil {
			return written, err
		}
		if m != int64(l) {
			return written, fmt.Errorf("fetch frame: log data wrote %d bytes, promised %d", m, l)
		}
		off = h.pos + f.prefixLen + markerLen
	}
	n, err := w.Write(f.buf[off:])
	written += int64(n)
	return written, err
}
