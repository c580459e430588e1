// Package config reads a broker's server.properties and describes the
// topic-level configs, with Apache Kafka's names and defaults (Kafka 3.9;
// docs/replication-reference.md, "Configuration", names the Kafka files).
//
// API surface:
//   - Load(path, overrides) parses a java.util.Properties file plus
//     "key=value" overrides (kafka-server-start.sh --override; later wins)
//     into a typed *Config. Unknown keys become warnings for the caller to
//     log; a bad value is a *ValueError naming the key and the value.
//   - (*Config).Standalone, LogDefaults, TopicLogConfig, TopicDefault and
//     BrokerConfigEntries feed the server and the logs.
//   - TopicConfigDefs, LookupTopicConfig and ValidateTopicConfigs describe
//     and check topic configs (CreateTopics, AlterConfigs, DescribeConfigs).
//
// Deliberate differences from Kafka: broker.id defaults to 0 (Kafka: -1,
// generated through ZooKeeper), and -1 is refused in standalone mode; only
// the PLAINTEXT security protocol is accepted; advertised.listeners derived
// from listeners advertise 127.0.0.1 for an empty or wildcard host; the
// thread-pool keys (num.network.threads, num.io.threads ...) are accepted
// and ignored; metrics.listener and pprof.enable are ours.
//
// Invariants: a *Config returned by Load is complete (every field holds the
// set value or Kafka's default) and never changes afterwards, so it is safe
// to share between goroutines without locks. Durations in "never" are the
// largest time.Duration; Millis turns them back into Long.MaxValue ms.
package config
