package sasl

// Server is the server side of one SASL authentication exchange, as Kafka's
// javax.security.sasl.SaslServer is used by SaslServerAuthenticator.
type Server interface {
	// Mechanism is the SASL mechanism name ("PLAIN", "SCRAM-SHA-256", ...).
	Mechanism() string
	// Step consumes one client token (SaslAuthenticateRequest.AuthBytes)
	// and returns the server's reply (SaslAuthenticateResponse.AuthBytes).
	// done is true once the client is authenticated. A failure is an
	// *AuthError; after a failure or completion every further Step fails
	// with an IllegalState *AuthError.
	Step(token []byte) (reply []byte, done bool, err error)
	// AuthorizationID is the authenticated principal name; "" until done.
	AuthorizationID() string
}

// MaxTokenSize bounds one client token. It is Kafka's default
// sasl.server.max.receive.size (BrokerSecurityConfigs), which bounds the whole
// SaslAuthenticate request, so no token Kafka would accept is refused here;
// anything longer is rejected before it is parsed.
const MaxTokenSize = 524288

// state is where an exchange is, named as Kafka's ScramSaslServer.State so
// that the illegal-state text matches.
type state int

const (
	stateFirst state = iota // RECEIVE_CLIENT_FIRST_MESSAGE
	stateFinal              // RECEIVE_CLIENT_FINAL_MESSAGE
	stateComplete
	stateFailed
)

func (s state) String() string {
	switch s {
	case stateFirst:
		return "RECEIVE_CLIENT_FIRST_MESSAGE"
	case stateFinal:
		return "RECEIVE_CLIENT_FINAL_MESSAGE"
	case stateComplete:
		return "COMPLETE"
	default:
		return "FAILED"
	}
}
