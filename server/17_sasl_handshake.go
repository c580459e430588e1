package server

// SaslHandshake, versions 0-1.
//
// On a SASL listener the protocol layer runs the exchange (it must happen
// before any other request is served, and a re-authentication in the
// middle of a connection); the handler only sees a SaslHandshake on a
// listener without SASL, and answers it as Kafka's KafkaApis does:
// ILLEGAL_SASL_STATE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.SASLHandshake.Int16(), 0, 1, handleSASLHandshake) }

func handleSASLHandshake(_ *Broker, _ context.Context, _ *protocol.Request) protocol.Response {
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.ErrorCode = kerr.IllegalSaslState.Code
	resp.SupportedMechanisms = []string{}
	return protocol.Response{Msg: resp}
}
