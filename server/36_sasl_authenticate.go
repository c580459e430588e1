package server

// SaslAuthenticate, versions 0-2.
//
// Like SaslHandshake, served by the protocol layer on SASL listeners; a
// SaslAuthenticate reaching the handler came on a listener without SASL,
// or out of turn, and gets Kafka's ILLEGAL_SASL_STATE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.SASLAuthenticate.Int16(), 0, 2, handleSASLAuthenticate) }

func handleSASLAuthenticate(_ *Broker, _ context.Context, _ *protocol.Request) protocol.Response {
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.ErrorCode = kerr.IllegalSaslState.Code
	resp.ErrorMessage = nullableString("SaslAuthenticate request received after successful authentication")
	return protocol.Response{Msg: resp}
}
