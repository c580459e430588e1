// Command kbroker runs one Kafka-compatible broker:
//
//	kbroker server.properties [--override key=value ...]
//	kbroker audit --bootstrap-server host:port [--topic a,b]
//
// like Kafka's kafka-server-start.sh (--override=key=value works too; a
// later override wins). It is a thin main: it loads the configuration
// (package config), logs unknown keys as warnings, serves Prometheus
// metrics on metrics.listener (Go and process collectors plus whatever the
// broker registers) with net/http/pprof under /debug/pprof when
// pprof.enable=true, and runs server.Broker until a signal.
//
// `kbroker audit` (audit.go) is the replica audit run from outside the
// cluster (docs/replica-audit.md): it prints each follower whose batches
// below the high watermarks differ from its leader's and exits 1 if there
// is one, 3 if some replica could not be read, 0 otherwise.
//
// Exit codes: 0 after a clean shutdown, 1 for a configuration the broker
// refuses or a broker failure, 2 for a command line it cannot read.
// The log goes to stderr as slog text, at the level in KBROKER_LOG_LEVEL
// (debug, info, warn, error; default info).
//
// Signals: the first SIGTERM or SIGINT cancels the run context and the
// broker shuts down in a controlled way; a second one exits at once.
//
// All wiring to package server is in run.go so that this file does not
// change when the broker's constructor does.
package main
