// Package tlsconfig builds Go *tls.Config values from Kafka's ssl.*
// properties, as Kafka's DefaultSslEngineFactory builds SSLEngines from
// them, so that a listener or client configured for Kafka works unchanged.
//
// API surface:
//   - Server(props) for a broker listener and Client(props, serverName) for
//     a connection to a broker. props holds unprefixed keys (the caller
//     resolves listener.name.<l>.ssl.* overrides first). An empty value
//     counts as unset.
//   - The property names as constants (KeystoreLocation, ClientAuth ...)
//     and Kafka's defaults (DefaultStoreType JKS, DefaultEnabledProtocols
//     "TLSv1.2,TLSv1.3", DefaultEndpointIdentification "https" ...).
//   - Every error is a *PropertyError naming the property to fix and
//     wrapping ErrConfig. VersionName gives JSSE's name of a TLS version.
//
// Key and trust material, with the property checks of Kafka's
// createKeystore/createTruststore:
//   - JKS and PKCS12 files (ssl.keystore.location/password,
//     ssl.key.password, ssl.truststore.location/password). As in Java 9+,
//     either type reads either format (told apart by the file's magic).
//     Every JKS key entry becomes a certificate; a PKCS12 key store holds
//     one key. Trust anchors are a store's trusted certificate entries plus
//     the first certificate of each key entry; PKCS12 certificates need
//     Java's trusted mark (keytool adds it, openssl only with -jdktrust). A
//     JKS trust store without a password is read without its integrity
//     check, as Java does. JCEKS is not supported.
//   - PEM: inline ssl.keystore.key plus ssl.keystore.certificate.chain, or
//     one ssl.keystore.location file holding both (ssl.keystore.type=PEM,
//     case sensitive as in Kafka); ssl.truststore.certificates or a PEM
//     trust file. PEM is read with Kafka's lenient PemParser pattern (text
//     around entries, header lines, one-line values). Keys are PKCS#8,
//     encrypted with PBES2 (PBKDF2 with HMAC-SHA1/224/256/384/512, AES-CBC
//     or 3DES-CBC) or pbeWithSHAAnd3-KeyTripleDES-CBC when ssl.key.password
//     is set.
//   - Without a trust store the system roots are used (Java: cacerts).
//
// Handshake settings:
//   - ssl.client.auth none/requested/required (case insensitive) is
//     NoClientCert / VerifyClientCertIfGiven / RequireAndVerifyClientCert.
//   - ssl.enabled.protocols sets MinVersion..MaxVersion (TLSv1 to TLSv1.3;
//     Go cannot leave a gap inside the range). ssl.protocol TLSv1.2 keeps a
//     client off TLS 1.3, as Kafka documents.
//   - ssl.cipher.suites takes JSSE/IANA names. Go chooses the order itself
//     and cannot restrict TLS 1.3 suites: listing any keeps all three, and
//     listing none of one kind turns that TLS version off, as it would in
//     JSSE. Suites JSSE knows but Go lacks (DHE, static ECDH ...) are
//     dropped; an unknown name is an error.
//   - ssl.endpoint.identification.algorithm "https" (default) checks the
//     broker's host name; "" checks only the chain (InsecureSkipVerify plus
//     a VerifyConnection that verifies against the trust store).
//
// Deliberate differences from Kafka: a server without a key store, an
// unknown ssl.client.auth, and a key that does not match its certificate
// are errors here (Kafka would start and fail handshakes, or fall back to
// no client authentication).
//
// Invariants: Server and Client read the store files named in the
// properties and nothing else, once per call; the returned configs hold
// no reference to the map and may be shared by goroutines (tls.Config
// rules apply: Clone before changing one in use). No locks.
package tlsconfig
