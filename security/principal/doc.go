// Package principal holds Kafka principals and the SSL side of Kafka's
// DefaultKafkaPrincipalBuilder: how a client certificate becomes a
// principal name.
//
// API surface:
//   - Principal{Type, Name}, String() "User:alice", User(name), Anonymous
//     (User:ANONYMOUS), and Parse("Type:Name") as Kafka's
//     SecurityUtils.parseKafkaPrincipal (split at the first ':').
//   - DistinguishedName(cert) and FormatDN(der): the subject as Java's
//     X500Principal.getName() renders it (RFC 2253 form), which is the
//     string Kafka's mapping rules see.
//   - ParseSSLMappingRules(ssl.principal.mapping.rules) -> *SSLMapper and
//     (*SSLMapper).Name(dn), as Kafka's SslPrincipalMapper; String() prints
//     the rules as Kafka does. DefaultSSLMappingRules is the property's
//     default. Errors wrap ErrInvalidRule, ErrNoMatchingRule,
//     ErrPrincipalFormat or ErrDistinguishedName.
//   - FromCertificate(cert, mapper): no certificate is Anonymous, otherwise
//     User:<mapped DN>.
//
// The DN rendering is Java's, quirks included, and the tests compare it with
// a JVM: RDNs last-to-first, multi-valued RDNs joined by '+' in encoded
// order, keywords only for CN C L ST O OU STREET DC UID (other types as
// dotted OIDs with a #hex DER value, as are values of non-string types),
// ",=+<>#;\"\\" escaped wherever they occur, leading and trailing spaces and
// carriage returns escaped, NUL as \00, and string values decoded by tag as
// current JDK updates do: BMPString as UTF-16BE (a name with a character
// outside the BMP there is refused, as Java refuses it), UTF8String as
// UTF-8, the 8-bit string types as ISO-8859-1.
//
// Mapping rules are Java regular expressions run by Go's regexp, with
// Java's Matcher behaviour rebuilt where it shows: matches() for the rule
// test, the find() loop of String.replaceAll (which, unlike Go's
// ReplaceAll, also replaces an empty match right after a non-empty one, so
// "RULE:(.*)/x$1/" gives "xDNx" as in Kafka), Java's replacement syntax
// ($n taking as many digits as name a group, ${name}, \x) and Kafka's
// escapeLiteralBackReferences with its off-by-one. Java's '.' (no line
// terminators) replaces Go's (no \n). Differences that remain:
//   - Go rejects look-around, back references, possessive quantifiers,
//     \p{Alpha}-style POSIX names, \h \R \X and class intersections; such a
//     rule is a parse error here although Kafka accepts it.
//   - Java's $ also matches before a final line terminator, Go's only at
//     the very end; Java's \b knows Unicode letters, Go's only ASCII; Java's
//     (?i) folds ASCII only, Go's all of Unicode; Go's \s lacks \x0B.
//   - A pattern that turns on the s flag anywhere keeps Go's dots
//     throughout.
//   - L and U use Go's simple case mappings (Java's toUpperCase makes "ß"
//     "SS", Go leaves it).
//
// Invariants: a parsed *SSLMapper never changes, so it may be shared by
// goroutines without locks. Nothing here does IO.
package principal
