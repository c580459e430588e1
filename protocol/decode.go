package protocol

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/wirefix"
)

// apiVersionsKey is ApiVersions, the one API whose unsupported versions are
// answered instead of refused (KIP-511).
const apiVersionsKey = 18

// versionsFunc is Handler.Versions.
type versionsFunc func(key int16) (min, max int16, ok bool)

// decodeRequest decodes one frame (the bytes after the size prefix). The
// returned Request's Body aliases frame: kmsg keeps byte fields such as
// Produce records as sub-slices, so frame must not be reused afterwards.
func decodeRequest(frame []byte, versions versionsFunc) (*Request, error) {
	var body kmsg.Request
	supported := func(key, version int16) bool {
		body = kmsg.RequestForKey(key)
		if body == nil {
			return false
		}
		lo, hi, ok := versions(key)
		return ok && version >= lo && version <= hi && version <= body.MaxVersion()
	}
	var served bool
	flexible := func(key, version int16) bool {
		served = supported(key, version)
		if !served {
			// We will not read the body, so its header tags do not matter.
			return false
		}
		body.SetVersion(version)
		return body.IsFlexible()
	}
	h, rest, err := parseRequestHeader(frame, flexible)
	if err != nil {
		return nil, err
	}
	req := &Request{
		Key:              h.Key,
		Version:          h.Version,
		RequestedVersion: h.Version,
		CorrelationID:    h.CorrelationID,
		ClientID:         h.ClientID,
		Size:             len(frame),
	}
	switch {
	case body == nil:
		return nil, fmt.Errorf("unknown api key %d", h.Key)
	case !served && h.Key == apiVersionsKey:
		// The client does not know our range yet; a v0 answer is the one it
		// can always parse, and the handler fills in UNSUPPORTED_VERSION.
		req.Version = 0
		req.Body = &kmsg.ApiVersionsRequest{Version: 0}
		return req, nil
	case !served:
		return nil, fmt.Errorf("unsupported version %d of %s", h.Version, kmsg.NameForKey(h.Key))
	}
	wirefix.Incoming(h.Key, h.Version, rest)
	if err := body.ReadFrom(rest); err != nil {
		return nil, fmt.Errorf("decoding %s v%d: %w", kmsg.NameForKey(h.Key), h.Version, err)
	}
	req.Body = body
	return req, nil
}
