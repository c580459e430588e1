package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// requestHeader is Kafka's request header v1, plus v2's tagged fields
// (skipped: no request header tag is defined that a broker must act on).
type requestHeader struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      *string
}

// fixedHeaderLen is key + version + correlation id + client id length: the
// smallest legal request frame, which is why a size below it closes the
// connection.
const fixedHeaderLen = 2 + 2 + 4 + 2

var errShortHeader = errors.New("request header truncated")

// parseRequestHeader parses the header at the start of frame and returns the
// body after it. flexible decides header v2 from the key and version just
// read, because only the API's schema knows when its header gained tags.
func parseRequestHeader(frame []byte, flexible func(key, version int16) bool) (requestHeader, []byte, error) {
	var h requestHeader
	if len(frame) < fixedHeaderLen {
		return h, nil, errShortHeader
	}
	h.Key = int16(binary.BigEndian.Uint16(frame[0:]))
	h.Version = int16(binary.BigEndian.Uint16(frame[2:]))
	h.CorrelationID = int32(binary.BigEndian.Uint32(frame[4:]))
	// The client id stays an int16-length string even in header v2: Kafka
	// kept it non-compact so that old brokers can still read the header of a
	// request they will refuse.
	n := int(int16(binary.BigEndian.Uint16(frame[8:])))
	rest := frame[fixedHeaderLen:]
	switch {
	case n == -1:
	case n < -1:
		return h, nil, fmt.Errorf("client id length %d", n)
	case n > len(rest):
		return h, nil, fmt.Errorf("client id length %d exceeds the %d bytes left", n, len(rest))
	default:
		id := string(rest[:n])
		h.ClientID = &id
		rest = rest[n:]
	}
	if flexible == nil || !flexible(h.Key, h.Version) {
		return h, rest, nil
	}
	rest, err := skipTaggedFields(rest)
	return h, rest, err
}

// skipTaggedFields skips a tag buffer: uvarint count, then per field a
// uvarint tag, a uvarint size and size bytes.
func skipTaggedFields(b []byte) ([]byte, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("bad tagged field count")
	}
	b = b[n:]
	// Every field takes at least two bytes, so a count above that is a lie
	// we can reject before looping.
	if count > uint64(len(b))/2 {
		return nil, fmt.Errorf("%d tagged fields in %d bytes", count, len(b))
	}
	for i := uint64(0); i < count; i++ {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("bad tag")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad tagged field size")
		}
		b = b[n:]
		if size > uint64(len(b)) {
			return nil, fmt.Errorf("tagged field of %d bytes exceeds the %d bytes left", size, len(b))
		}
		b = b[size:]
	}
	return b, nil
}

// appendResponseHeader appends a response header: the correlation id, and
// for header v1 an empty tag buffer.
func appendResponseHeader(dst []byte, correlationID int32, v1 bool) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if v1 {
		dst = append(dst, 0)
	}
	return dst
}
