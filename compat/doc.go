// Package compat holds the compatibility tests: stock Apache Kafka tools
// (compat/bin, jars from compat/pom.xml), kcat and franz-go driving real
// kbroker processes started by compat/harness. It has no non-test code.
//
// Every test asserts on what a user would observe (lines printed, records
// read back, offsets, error codes) and every wait in it is bounded.
//
// compat/kgo-suite.sh runs franz-go's own pkg/kgo integration tests
// against a kbroker; compat/kgo-allowlist.txt lists the ones that pass and
// compat/FINDINGS.md explains the ones that do not. With --cluster it runs
// compat/kgo-allowlist-cluster.txt against three replicating kbrokers.
//
// Some tests compare kbroker's answers with Apache Kafka 3.9.1's, recorded
// in compat/testdata (oracle_test.go): KBROKER_ORACLE=kafka39 runs them
// against Kafka 3.9.1 itself and records its answers again.
//
// The security tests (security_*_test.go) drive TLS, SASL and ACLs with
// the stock clients against a secured broker (harness.StartSecureBroker);
// KBROKER_ORACLE=kafka39 runs them against Kafka 3.9.1 instead, with the
// same settings, to show their expectations are Kafka's.
//
// compat/java holds small programs on Kafka's Java client (TxnClient for
// the transaction tests), compiled by the harness at test time.
package compat
