package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/protocol"
)

// handlerFunc serves one API. It runs on the connection's read loop; long
// waits go into the returned Response's Wait.
type handlerFunc func(b *Broker, ctx context.Context, req *protocol.Request) protocol.Response

type api struct {
	key      int16
	min, max int16
	handle   handlerFunc
}

var apis = map[int16]api{}

// register adds an API to the dispatch table and to the ApiVersions answer.
func register(key int16, min, max int16, fn handlerFunc) {
	if _, dup := apis[key]; dup {
		panic(fmt.Sprintf("API key %d registered twice", key))
	}
	if r := kmsg.RequestForKey(key); r == nil || r.MaxVersion() < max {
		panic(fmt.Sprintf("API key %d: kmsg cannot encode version %d", key, max))
	}
	apis[key] = api{key: key, min: min, max: max, handle: fn}
}

// supportedAPIs lists the served APIs in key order, as ApiVersions reports them.
func supportedAPIs() []kmsg.ApiVersionsResponseApiKey {
	out := make([]kmsg.ApiVersionsResponseApiKey, 0, len(apis))
	for _, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ApiKey < out[j].ApiKey })
	return out
}

// Versions implements protocol.Handler.
func (b *Broker) Versions(key int16) (int16, int16, bool) {
	a, ok := apis[key]
	return a.min, a.max, ok
}

// RecyclesFrame implements protocol.FrameRecycler: a produce request's
// records are copied into the log (the page cache) and
// nothing else keeps them, so its frame can be reused once answered.
func (b *Broker) RecyclesFrame(key int16) bool { return key == kmsg.Produce.Int16() }

// Handle implements protocol.Handler.
func (b *Broker) Handle(ctx context.Context, req *protocol.Request) protocol.Response {
	a, ok := apis[req.Key]
	if !ok {
		// The protocol layer already refuses keys Versions does not know.
		b.logger.Warn("request for an API that is not served", slog.Int("key", int(req.Key)))
		return protocol.Response{Close: true}
	}
	return b.handleWithQuotas(a, ctx, req)
}

// ConnClosed implements protocol.Handler.
func (b *Broker) ConnClosed(c *protocol.ConnInfo) {
	_ = c // no per-connection state yet: fetch sessions outlive connections, as in Kafka
}

// errCode returns the Kafka error code of err (0 for nil); errors Kafka has
// no code for become UNKNOWN_SERVER_ERROR.
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	switch {
	case errors.Is(err, logstore.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, logstore.ErrCorruptMessage):
		return kerr.CorruptMessage.Code
	case errors.Is(err, logstore.ErrRecordTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, logstore.ErrInvalidRecord), errors.Is(err, logstore.ErrUnsupportedMagic):
		return kerr.InvalidRecord.Code
	case errors.Is(err, logstore.ErrLogDirFailed):
		return kerr.KafkaStorageError.Code
	case errors.Is(err, logstore.ErrClosed):
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.UnknownServerError.Code
}

// remoteIP is the client's address without the port, as Kafka shows
// client hosts.
func remoteIP(c *protocol.ConnInfo) string {
	if c == nil {
		return ""
	}
	return c.Host()
}
