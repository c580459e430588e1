package sasl

import "strconv"

// AuthError is a failed exchange step. Kafka's SaslServerAuthenticator treats
// the exceptions a SaslServer throws in two ways: a SaslAuthenticationException
// carries a message meant for the client, which goes into SaslAuthenticate's
// ErrorMessage verbatim; any other SaslException may hold details that must
// not leak to an unauthenticated client (whether a user exists, for one), so
// the client gets a fixed text naming only the mechanism. Public says which
// of the two Kafka would have thrown; Reason is Kafka's exception text in
// both cases, for logs.
type AuthError struct {
	// Mechanism is the SASL mechanism name, as in the fixed client text.
	Mechanism string
	// Reason is the text of Kafka's exception. It reaches the client only
	// when Public (or IllegalState) is set.
	Reason string
	// Public marks Kafka's SaslAuthenticationException: Reason is the
	// client's ErrorMessage.
	Public bool
	// IllegalState marks Kafka's IllegalSaslStateException: Step was called
	// after the exchange had completed or failed. The protocol layer answers
	// with ILLEGAL_SASL_STATE rather than SASL_AUTHENTICATION_FAILED.
	IllegalState bool
}

// ErrorMessage is the text Kafka puts in SaslAuthenticateResponse's
// ErrorMessage. reauthenticating selects KIP-368's wording for a
// re-authentication on an established connection.
func (e *AuthError) ErrorMessage(reauthenticating bool) string {
	if e.Public || e.IllegalState {
		return e.Reason
	}
	what := "authentication"
	if reauthenticating {
		what = "re-authentication"
	}
	return "Authentication failed during " + what + " due to invalid credentials with SASL mechanism " + e.Mechanism
}

// Error is the client text for a first authentication, so that an AuthError
// passed around as a plain error still says what Kafka would have said.
func (e *AuthError) Error() string { return e.ErrorMessage(false) }

// publicError is Kafka's SaslAuthenticationException.
func publicError(mechanism, reason string) *AuthError {
	return &AuthError{Mechanism: mechanism, Reason: reason, Public: true}
}

// privateError is Kafka's plain SaslException.
func privateError(mechanism, reason string) *AuthError {
	return &AuthError{Mechanism: mechanism, Reason: reason}
}

// illegalState is Kafka's IllegalSaslStateException for a Step after the end.
func illegalState(mechanism string, st state) *AuthError {
	return &AuthError{Mechanism: mechanism, IllegalState: true,
		Reason: "Unexpected challenge in Sasl server state " + st.String()}
}

// tooLong rejects a token over MaxTokenSize before any parsing.
func tooLong(mechanism string, n int) *AuthError {
	return privateError(mechanism, "SASL token of "+strconv.Itoa(n)+" bytes exceeds the bound of "+strconv.Itoa(MaxTokenSize)+" bytes")
}

var errNilFunc = errorString("sasl: NewScramServer needs a lookup and a nonce function")

// errorString is an error whose text is Kafka's, capitalised as Kafka
// writes it, since callers put it into responses verbatim (errors.New would
// be flagged for the capital letter).
type errorString string

func (e errorString) Error() string { return string(e) }
