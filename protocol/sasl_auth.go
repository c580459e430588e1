package protocol

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/security/sasl"
)

// API keys the SASL exchange is made of.
const (
	saslHandshakeKey    = 17
	saslAuthenticateKey = 36
)

// saslStage is where a connection is in Kafka's SaslServerAuthenticator
// state machine.
type saslStage int8

const (
	// stageHandshake: only ApiVersions and SaslHandshake are served.
	stageHandshake saslStage = iota
	// stageAuthenticate: a version 1 handshake chose a mechanism; the
	// tokens come in SaslAuthenticate requests.
	stageAuthenticate
	// stageRawTokens: a version 0 handshake chose a mechanism; the tokens
	// come as bare size-prefixed frames (Kafka before KIP-152).
	stageRawTokens
	// stageAuthenticated: requests are served; a SaslHandshake starts a
	// re-authentication (KIP-368).
	stageAuthenticated
)

// saslState is one connection's SASL authentication; only the read loop
// touches it.
type saslState struct {
	lc    *ListenerConfig
	stage saslStage
	// reauth marks an exchange on an authenticated connection.
	reauth bool
	server SASLServer
	// mechanism is the one the first authentication used; a
	// re-authentication must keep it.
	mechanism string
	// expires is when the session ends (zero: never); after it only a
	// re-authentication is served.
	expires time.Time
	// started is when the current exchange began, for the log.
	started time.Time
}

// errSASLState is a request Kafka's authenticator does not expect in the
// current stage (IllegalSaslStateException): the connection is closed
// without an answer.
var errSASLState = errors.New("illegal SASL state")

// authenticated reports whether requests may be served.
func (s *saslState) authenticated() bool { return s.stage == stageAuthenticated }

// maxFrame is the largest frame read in the current stage.
func (c *conn) maxFrame() int {
	if s := c.sasl; s != nil && !s.authenticated() && s.lc.SASLMaxReceiveSize > 0 {
		return s.lc.SASLMaxReceiveSize
	}
	return c.srv.cfg.MaxRequestSize
}

// rawTokenStage reports whether the next frame is a bare SASL token.
func (c *conn) rawTokenStage() bool { return c.sasl != nil && c.sasl.stage == stageRawTokens }

// interceptSASL runs the SASL exchange for req. handled means the answer
// is resp and the handler must not see req; an error closes the
// connection without an answer.
func (c *conn) interceptSASL(req *Request, now time.Time) (resp Response, handled bool, err error) {
	s := c.sasl
	switch s.stage {
	case stageHandshake:
		switch req.Key {
		case apiVersionsKey:
			return Response{}, false, nil
		case saslHandshakeKey:
			return c.saslHandshake(req, now), true, nil
		}
		return Response{}, true, fmt.Errorf("%w: unexpected %s request during SASL handshake", errSASLState, kmsg.NameForKey(req.Key))
	case stageAuthenticate:
		if req.Key != saslAuthenticateKey {
			return Response{}, true, fmt.Errorf("%w: unexpected %s request during SASL authentication", errSASLState, kmsg.NameForKey(req.Key))
		}
		return c.saslAuthenticate(req, now), true, nil
	}
	// Authenticated.
	if req.Key == saslHandshakeKey {
		if req.Version < 1 {
			return Response{}, true, fmt.Errorf("%w: re-authentication needs SaslHandshake v1 or later", errSASLState)
		}
		s.reauth = true
		return c.saslHandshake(req, now), true, nil
	}
	if !s.expires.IsZero() && !now.Before(s.expires) {
		return Response{}, true, fmt.Errorf("SASL session expired at %s without re-authentication (connections.max.reauth.ms)", s.expires.Format(time.RFC3339Nano))
	}
	return Response{}, false, nil
}

func (c *conn) saslHandshake(req *Request, now time.Time) Response {
	s := c.sasl
	body := req.Body.(*kmsg.SASLHandshakeRequest)
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.SupportedMechanisms = s.lc.SASL.Mechanisms()
	server, ok := s.lc.SASL.New(body.Mechanism)
	switch {
	case !ok:
		c.log.Warn("closing connection: SASL mechanism not enabled", "mechanism", body.Mechanism, "enabled", resp.SupportedMechanisms)
		c.counters.authFailed(s.reauth)
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		return Response{Msg: resp, CloseAfter: true}
	case s.reauth && body.Mechanism != s.mechanism:
		// Kafka refuses a re-authentication that changes mechanism.
		c.log.Warn("closing connection: re-authentication changed SASL mechanism", "from", s.mechanism, "to", body.Mechanism)
		c.counters.authFailed(true)
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		return Response{Msg: resp, CloseAfter: true}
	}
	s.server, s.started = server, now
	s.stage = stageAuthenticate
	if req.Version == 0 {
		s.stage = stageRawTokens
	}
	return Response{Msg: resp}
}

func (c *conn) saslAuthenticate(req *Request, now time.Time) Response {
	body := req.Body.(*kmsg.SASLAuthenticateRequest)
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	reply, done, err := c.sasl.server.Step(body.SASLAuthBytes)
	if err != nil {
		c.saslFailed(err)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := err.Error()
		// What the client is told hides whether the user exists; the
		// log above has the reason.
		var ae *sasl.AuthError
		if errors.As(err, &ae) {
			msg = ae.ErrorMessage(c.sasl.reauth)
			if ae.IllegalState {
				resp.ErrorCode = kerr.IllegalSaslState.Code
			}
		}
		resp.ErrorMessage = &msg
		return Response{Msg: resp, CloseAfter: true}
	}
	resp.SASLAuthBytes = reply
	if done {
		if err := c.saslDone(now, req.Version); err != nil {
			c.saslFailed(err)
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			msg := err.Error()
			resp.ErrorMessage = &msg
			resp.SASLAuthBytes = nil
			return Response{Msg: resp, CloseAfter: true}
		}
		if !c.sasl.expires.IsZero() {
			resp.SessionLifetimeMillis = c.sasl.lc.ReauthMax.Milliseconds()
		}
	}
	return Response{Msg: resp}
}

// saslRawToken is one token of a version 0 exchange: the reply goes back
// as a bare frame, and a failure closes the connection without one, as
// Kafka does before KIP-152.
func (c *conn) saslRawToken(token []byte, now time.Time) (Response, error) {
	reply, done, err := c.sasl.server.Step(token)
	if err != nil {
		return Response{}, err
	}
	if done {
		if err := c.saslDone(now, 0); err != nil {
			return Response{}, err
		}
	}
	if reply == nil {
		reply = []byte{}
	}
	return Response{raw: reply}, nil
}

// saslDone ends a successful exchange: the principal is set, or checked
// to be unchanged on a re-authentication (Kafka refuses a
// re-authentication as someone else).
func (c *conn) saslDone(now time.Time, authenticateVersion int16) error {
	s := c.sasl
	principal := "User:" + s.server.AuthorizationID()
	if s.reauth && principal != c.info.Principal() {
		// The client is shown this text; it keeps the wording of Kafka's
		// SaslServerAuthenticator.
		//lint:ignore ST1005 Kafka's message, capitalised as Kafka writes it
		return fmt.Errorf("Cannot change principals during re-authentication from %s: %s", c.info.Principal(), principal)
	}
	c.info.SetPrincipal(principal)
	s.mechanism = s.server.Mechanism()
	s.server = nil
	s.stage = stageAuthenticated
	s.expires = time.Time{}
	if s.lc.ReauthMax > 0 {
		s.expires = now.Add(s.lc.ReauthMax)
	}
	c.counters.authSucceeded(s.reauth, s.lc.ReauthMax > 0 && authenticateVersion < 1)
	c.log.Debug("SASL authentication succeeded", "principal", principal, "mechanism", s.mechanism, "reauthentication", s.reauth, "took", now.Sub(s.started))
	s.reauth = false
	return nil
}

// saslFailed logs and counts an exchange that failed, with the reason
// the client is not told.
func (c *conn) saslFailed(err error) {
	reauth := c.sasl != nil && c.sasl.reauth
	c.counters.authFailed(reauth)
	reason := err.Error()
	var ae *sasl.AuthError
	if errors.As(err, &ae) && ae.Reason != "" {
		reason = ae.Reason
	}
	c.log.Info("closing connection: SASL authentication failed", "reason", reason, "reauthentication", reauth)
}
