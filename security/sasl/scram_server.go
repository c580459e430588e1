package sasl

import (
	"crypto/hmac"
	"encoding/base64"
	"strconv"
	"strings"
)

// ScramTokenLookup finds a delegation token (KIP-48) by id for a client whose
// first message carries the extension tokenauth=true: the SCRAM credential
// derived from the token's HMAC, the token owner (who becomes the
// authorization id) and the token's expiry in epoch milliseconds.
type ScramTokenLookup func(tokenID string) (cred ScramCredential, owner string, expiryMs int64, ok bool)

// ScramOption configures NewScramServer.
type ScramOption func(*ScramServer)

// WithTokenLookup enables delegation-token logins. Without it a client
// asking for token authentication fails as if the token did not exist.
func WithTokenLookup(lookup ScramTokenLookup) ScramOption {
	return func(s *ScramServer) { s.tokenLookup = lookup }
}

// ScramServer is one SCRAM-SHA-256/512 exchange (RFC 5802, RFC 7677), the
// counterpart of Kafka's ScramSaslServer: client-first → server-first,
// client-final → server-final. It is not safe for concurrent use; one
// connection drives it.
type ScramServer struct {
	mech        *scramMech
	lookup      func(user string) (ScramCredential, bool)
	tokenLookup ScramTokenLookup
	nonce       func() string

	st          state
	first       clientFirst
	serverFirst string
	fullNonce   string
	cred        ScramCredential
	authzID     string
	tokenAuth   bool
	tokenExpiry int64
}

// NewScramServer starts a SCRAM exchange for mechanism (ScramSHA256 or
// ScramSHA512). lookup returns a user's stored credential; nonce returns the
// server's part of the nonce (printable ASCII without ','; RandomNonce makes
// one as Kafka does) and is called once, on the client-first message.
func NewScramServer(mechanism string, lookup func(user string) (ScramCredential, bool), nonce func() string, opts ...ScramOption) (Server, error) {
	m := lookupMech(mechanism)
	if m == nil {
		return nil, unsupportedMechanism(mechanism)
	}
	if lookup == nil || nonce == nil {
		return nil, errNilFunc
	}
	s := &ScramServer{mech: m, lookup: lookup, nonce: nonce}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

func (s *ScramServer) Mechanism() string { return s.mech.name }

// AuthorizationID is the user name, or the token owner for a token login;
// "" until the exchange completes.
func (s *ScramServer) AuthorizationID() string {
	if s.st != stateComplete {
		return ""
	}
	return s.authzID
}

// TokenAuthenticated reports a completed delegation-token login and the
// token's expiry, which bounds the session lifetime (KIP-368).
func (s *ScramServer) TokenAuthenticated() (expiryMs int64, ok bool) {
	if s.st != stateComplete || !s.tokenAuth {
		return 0, false
	}
	return s.tokenExpiry, true
}

// Step handles the client-first message, then the client-final message.
func (s *ScramServer) Step(token []byte) ([]byte, bool, error) {
	switch s.st {
	case stateFirst, stateFinal:
	default:
		return nil, false, illegalState(s.mech.name, s.st)
	}
	if len(token) > MaxTokenSize {
		return nil, false, s.fail(tooLong(s.mech.name, len(token)))
	}
	if s.st == stateFirst {
		reply, err := s.receiveFirst(string(token))
		if err != nil {
			return nil, false, s.fail(err)
		}
		s.st = stateFinal
		return reply, false, nil
	}
	reply, err := s.receiveFinal(string(token))
	if err != nil {
		return nil, false, s.fail(err)
	}
	s.clear()
	s.st = stateComplete
	return reply, true, nil
}

// receiveFirst follows ScramSaslServer's order: parse, credential lookup,
// authorization id, iteration floor.
func (s *ScramServer) receiveFirst(msg string) ([]byte, *AuthError) {
	name := s.mech.name
	cf, err := parseClientFirst(msg)
	if err != nil {
		return nil, privateError(name, err.Error())
	}
	s.first = cf
	serverNonce := s.nonce()
	if !isPrintable(serverNonce) {
		return nil, privateError(name, "Authentication failed: Credentials could not be obtained")
	}
	if strings.EqualFold(cf.extensions["tokenauth"], "true") {
		// Kafka's ScramExtensions.tokenAuthenticated: Boolean.parseBoolean.
		var ok bool
		if s.tokenLookup != nil {
			s.cred, s.authzID, s.tokenExpiry, ok = s.tokenLookup(cf.user)
		}
		if !ok {
			return nil, privateError(name, "Token Authentication failed: Invalid tokenId : "+cf.user)
		}
		s.tokenAuth = true
	} else {
		cred, ok := s.lookup(cf.user)
		if !ok {
			return nil, privateError(name, "Authentication failed: Invalid user credentials")
		}
		s.cred, s.authzID = cred, cf.user
	}
	// Kafka compares the authzid to the (token id or) user name; both are
	// compared unescaped here, which only differs from Kafka for names
	// holding ',' or '=' that Kafka would wrongly refuse.
	if cf.authzID != "" && cf.authzID != cf.user {
		return nil, publicError(name, "Authentication failed: Client requested an authorization id that is different from username")
	}
	if s.cred.Iterations < MinIterations {
		return nil, privateError(name, "Iterations "+strconv.Itoa(s.cred.Iterations)+
			" is less than the minimum "+strconv.Itoa(MinIterations)+" for "+s.mech.enumName)
	}
	s.fullNonce = cf.nonce + serverNonce
	s.serverFirst = "r=" + s.fullNonce + ",s=" + base64.StdEncoding.EncodeToString(s.cred.Salt) +
		",i=" + strconv.Itoa(s.cred.Iterations)
	return []byte(s.serverFirst), nil
}

// receiveFinal checks the channel binding, the nonce and the proof, and
// answers with the server signature. The nonce need only end with the
// combined nonce, as Kafka's ScramSaslServer checks it: librdkafka sends
// its own nonce once more in front of the combined one, and Kafka accepts
// that. c= must be the gs2 header the client sent, as RFC 5802 requires (Kafka
// leaves that to the proof). AuthMessage is built from the messages
// exactly as sent, as RFC 5802 defines it.
func (s *ScramServer) receiveFinal(msg string) ([]byte, *AuthError) {
	name := s.mech.name
	cf, err := parseClientFinal(msg)
	if err != nil {
		return nil, privateError(name, err.Error())
	}
	if !strings.HasSuffix(cf.nonce, s.fullNonce) {
		return nil, privateError(name, "Invalid client nonce in the final client message.")
	}
	if string(cf.channelBinding) != s.first.gs2Header {
		return nil, privateError(name, "Invalid channel binding in the final client message.")
	}
	if len(cf.proof) != s.mech.size || len(s.cred.StoredKey) != s.mech.size {
		return nil, privateError(name, "Invalid client credentials")
	}
	authMsg := []byte(s.first.bare + "," + s.serverFirst + "," + cf.withoutProof)
	// ClientKey = ClientProof XOR HMAC(StoredKey, AuthMessage); the client
	// knows the password iff H(ClientKey) == StoredKey.
	clientKey := s.mech.hmac(s.cred.StoredKey, authMsg)
	for i := range clientKey {
		clientKey[i] ^= cf.proof[i]
	}
	if !hmac.Equal(s.mech.hash(clientKey), s.cred.StoredKey) {
		return nil, privateError(name, "Invalid client credentials")
	}
	sig := s.mech.hmac(s.cred.ServerKey, authMsg)
	return []byte("v=" + base64.StdEncoding.EncodeToString(sig)), nil
}

// fail ends the exchange, dropping the credential as Kafka's clearCredentials.
func (s *ScramServer) fail(err *AuthError) *AuthError {
	s.clear()
	s.st = stateFailed
	return err
}

func (s *ScramServer) clear() {
	s.cred = ScramCredential{}
	s.first = clientFirst{}
	s.serverFirst = ""
}
