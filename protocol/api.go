package protocol

import (
	"context"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Request is one decoded request. The header is parsed by this package (the
// request header is not a kmsg message); the body is decoded with kmsg.
type Request struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      *string
	// Body is the decoded kmsg request, Version already set.
	Body kmsg.Request
	// RequestedVersion is the version the client asked for. It differs from
	// Version only for an ApiVersions request newer than we serve: Kafka
	// answers those with a v0 response carrying UNSUPPORTED_VERSION and the
	// supported ranges, so the client can retry with a version we know (KIP-511).
	RequestedVersion int16
	// Size is the request's frame size in bytes.
	Size int

	Conn *ConnInfo

	// frame is the pooled buffer Body was decoded from; it goes back to
	// the pool once the response left, if the handler recycles this API.
	frame *pooledFrame
	// held is what the frame holds of the memory pool until it finishes.
	held int64
	// times are the request's phase boundaries for RequestMetrics.
	times reqTimes
}

// Frame is a response body that is not held in memory as a whole: Fetch
// responses whose record data stays in segment files until WriteTo hands it
// to the kernel.
type Frame interface {
	// Len is the number of bytes WriteTo writes (the body, without the
	// response header).
	Len() int
	WriteTo(w io.Writer) (int64, error)
}

// Response is a handler's answer. Exactly one of Msg, Frame and Wait is set,
// unless None or Close is.
type Response struct {
	// Msg is encoded by this package with the request's version.
	Msg kmsg.Response
	// Frame is written as is after the response header.
	Frame Frame
	// Wait is the second phase of a request (acks=all produce waiting for
	// replication, a long-polling fetch). It runs off the connection's read
	// loop, so later requests on the connection are read and started while
	// it waits; its result still leaves in request order.
	Wait func(ctx context.Context) Response
	// None means no response is sent (produce with acks=0).
	None bool
	// Close closes the connection after earlier responses were written
	// (a request Kafka would refuse by disconnecting).
	Close bool
	// CloseAfter closes the connection once this response was written:
	// Kafka answers a failed SASL exchange, then disconnects.
	CloseAfter bool
	// ThrottleMs is the throttle this response asks of the client, for
	// RequestMetrics ThrottleTimeMs. Zero reads it from Msg (the kmsg
	// ThrottleResponse field), so a handler that sets ThrottleMillis on
	// its message need not set it here too; a Frame response has no Msg
	// and must set it.
	ThrottleMs int32
	// Throttle mutes the connection for this long once the response is
	// ready: no further request is read from it before then (client
	// quotas, KIP-219). The response itself leaves at once.
	Throttle time.Duration

	// raw is a SASL token answered without a response header (the
	// exchange after a version 0 SaslHandshake).
	raw []byte
}

// Handler serves requests. Handle runs on the connection's read loop, in
// request order; it must not block for long (return Wait for that).
type Handler interface {
	// Versions reports the version range served for key; ok is false for an
	// API that is not served at all.
	Versions(key int16) (min, max int16, ok bool)
	Handle(ctx context.Context, req *Request) Response
	// ConnClosed lets the handler drop per-connection state.
	ConnClosed(c *ConnInfo)
}
