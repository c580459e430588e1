// Package sasl is the server side of Kafka's SASL mechanisms PLAIN and
// SCRAM-SHA-256/512, plus the SCRAM credential formats and the JAAS
// configuration text (sasl.jaas.config) that configure them. The protocol
// layer drives it: SaslHandshake picks a mechanism and creates a Server, and
// each SaslAuthenticate request's AuthBytes go to Server.Step, whose reply
// becomes the response's AuthBytes.
//
// API:
//   - Server: one exchange (Mechanism, Step, AuthorizationID). Failures are
//     *AuthError, whose ErrorMessage is the text Kafka's
//     SaslServerAuthenticator sends: the exception text for what Kafka
//     throws as SaslAuthenticationException (Public), otherwise the fixed
//     "Authentication failed during authentication due to invalid
//     credentials with SASL mechanism <m>".
//   - MaxTokenSize: the bound on one client token (Kafka's default
//     sasl.server.max.receive.size).
//   - NewPlainServer, PlainVerifier, PlainMechanism: RFC 4616 as Kafka's
//     PlainSaslServer.
//   - NewScramServer, WithTokenLookup, ScramTokenLookup, RandomNonce,
//     ScramServer (TokenAuthenticated), EscapeSaslName: RFC 5802 / RFC 7677
//     as Kafka's ScramSaslServer and ScramMessages, with KIP-48 delegation
//     tokens.
//   - ScramCredential, NewScramCredential, ScramCredentialFromSaltedPassword,
//     ParseScramCredential, String, ErrInvalidCredential: Kafka's
//     ScramFormatter and ScramCredentialUtils.
//   - MechanismType, MechanismName, IsScram, ScramMechanisms, MinIterations,
//     MaxIterations, ValidateIterations, ErrTooFewIterations,
//     ErrTooManyIterations: Kafka's ScramMechanism table and
//     AlterUserScramCredentials limits.
//   - ParseJAAS, ParseJAASProperty, LoginModule, PlainUsers,
//     ClientCredentials, MaxJAASSize, PlainLoginModuleClass,
//     ScramLoginModuleClass: Kafka's JaasConfig and the options its login
//     modules read.
//
// Where this package is stricter than Kafka it follows RFC 5802, and only
// clients no Kafka client resembles notice: c= must be the gs2 header the
// client sent, and AuthMessage is built from the messages as sent. The
// client-final nonce need only end with the combined nonce, as in Kafka:
// librdkafka puts its own nonce in front of it once more.
//
// Invariants: a Server is a state machine that only moves forward; after it
// completes or fails every Step fails with an IllegalState AuthError, and a
// failed SCRAM exchange forgets the credential it looked up. No input makes
// it panic; tokens over MaxTokenSize and JAAS text over MaxJAASSize are
// refused before parsing. The package does no IO, starts no goroutines and
// reads no clock: user lookups, token lookups and the server nonce are
// functions the caller passes in (RandomNonce is the one helper that reads
// system randomness, for the caller to pass).
//
// Locks: none. A Server belongs to one connection and is not safe for
// concurrent use; the lookup functions it calls must be safe for whatever
// concurrency the caller has.
package sasl
