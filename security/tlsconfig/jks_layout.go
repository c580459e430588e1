package tlsconfig

import (
	"encoding/binary"
	"errors"
)

// checkJKSLayout walks a JKS file's structure (Sun's JavaKeyStore format:
// magic, version, entry count; per entry a tag, an alias, a timestamp and
// a key with its certificate chain or one trusted certificate; a SHA-1
// digest at the end) and checks that every length and count fits in the
// bytes that follow. The decoder we use allocates whatever a length field
// or certificate count says before reading, so a truncated or corrupt
// file could otherwise make it ask for gigabytes.
func checkJKSLayout(data []byte) error {
	r := jksReader{b: data}
	if r.u32() != 0xfeedfeed {
		return errJKSLayout
	}
	version := r.u32()
	if version != 1 && version != 2 {
		return errJKSLayout
	}
	entries := r.u32()
	for i := uint32(0); i < entries && r.ok(); i++ {
		tag := r.u32()
		r.skip(uint32(r.u16())) // alias
		r.skip(8)               // creation time
		switch tag {
		case 1: // private key entry
			r.skip(r.u32())
			certs := r.u32()
			// Each certificate takes at least its 4-byte length.
			if uint64(certs)*4 > uint64(r.remaining()) {
				return errJKSLayout
			}
			for j := uint32(0); j < certs && r.ok(); j++ {
				r.certificate(version)
			}
		case 2: // trusted certificate entry
			r.certificate(version)
		default:
			return errJKSLayout
		}
	}
	if !r.ok() {
		return errJKSLayout
	}
	return nil
}

var errJKSLayout = errors.New("not a well-formed JKS store")

// jksReader reads big-endian fields; past the end it stays failed.
type jksReader struct {
	b   []byte
	bad bool
}

func (r *jksReader) ok() bool       { return !r.bad }
func (r *jksReader) remaining() int { return len(r.b) }

func (r *jksReader) take(n uint32) []byte {
	if r.bad || uint64(n) > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *jksReader) skip(n uint32) { r.take(n) }

func (r *jksReader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (r *jksReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (r *jksReader) certificate(version uint32) {
	if version == 2 {
		r.skip(uint32(r.u16())) // certificate type
	}
	r.skip(r.u32())
}
