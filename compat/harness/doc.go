// Package harness starts real kbroker processes, the stock Kafka tools and,
// as a reference, Apache Kafka itself for the compatibility tests in
// package compat and compat/cluster.
//
// API surface:
//   - Build(t) builds bin/kbroker once per test binary (KBROKER_BIN names a
//     prebuilt binary instead).
//   - StartBroker(t, overrides...) starts a standalone broker on a free
//     127.0.0.1 port with a fresh log dir and waits (bounded) until it answers
//     ApiVersions. Broker.Restart reuses the same port and log dir;
//     Broker.Term sends SIGTERM (controlled shutdown) and waits, Broker.Kill
//     sends SIGKILL. The broker's stdout and stderr go to Broker.LogPath,
//     whose tail is printed when the test fails.
//   - StartZooKeeper(t) runs a private ZooKeeper (scripts/zk.sh) on a free
//     port, stopped through its pid file at cleanup; ZooKeeper.Connect opens
//     a go-zookeeper session for reading znodes. ZooKeeper.Signal pauses,
//     resumes or kills it, Start starts it again; BlockClients drops the
//     loopback clients' packets to it (a frozen host, with Signal(SIGSTOP));
//     FourLetterWord and Ephemerals look at it from 127.0.0.2 meanwhile.
//   - StartCluster(t, n, overrides...) starts ZooKeeper and n cluster-mode
//     brokers (broker.id 1..n, short session and lag timeouts) and waits
//     until each lists all n in Metadata. Cluster.Restart, Cluster.WaitReady,
//     MetadataFrom (one broker exactly), Broker.Pause/Resume (SIGSTOP/SIGCONT).
//   - StartKafkaCluster(t, n, overrides...) starts n Apache Kafka nodes
//     (KRaft, broker and controller in each, the jars in compat/lib) and
//     returns a Cluster with a nil ZK, so a test's client logic can be run
//     against Kafka itself; Kill, Restart and WaitReady work as for kbroker.
//   - RunTool / RunToolInput run a wrapper from compat/bin (the Apache Kafka
//     command-line tools on the jars in compat/lib); Kcat runs kcat.
//   - StartKafka39(t, overrides...) runs Apache Kafka 3.9.1 in ZooKeeper
//     mode (jars in compat/lib39 from scripts/deps-kafka39.sh) with its own
//     ZooKeeper (zk.sh on the ZooKeeper jar Kafka ships with), the oracle
//     whose answers tests record; stopped by its handle at cleanup.
//   - DialWire(t, addr, timeout) is one connection whose Request(ctx, req)
//     sends a kmsg request at exactly req's version, with no negotiation,
//     routing or retries, so a test sees the broker's own answer.
//   - NewProxy(t, target) is a TCP proxy whose CutAll drops every open
//     connection, to test client retries and idempotence.
//   - JavaProgram(t, class) compiles compat/java/<class>.java against
//     compat/lib (cached in .cache/java by source hash); RunJava runs it.
//     ParseTxnConsume and TxnExpected read and predict the output of
//     compat/java/TxnClient.
//   - NewPKI(t) writes a test PKI into a temp dir with openssl and keytool:
//     a CA, the brokers' certificate (SAN IP:127.0.0.1, DNS:localhost) as
//     PKCS12, JKS and PEM keystores, PKCS12 and JKS truststores, client
//     certificates alice and bob, and mallory from an unrelated CA
//     (PKI.Clients; Cert.Principal is the subject as Kafka names it).
//     PKI.BrokerSSL gives a broker's ssl.* keys (optionally for one
//     listener); ClientAuth describes a client (security.protocol, SASL
//     mechanism, user, certificate, store type) and PKI.JavaProps,
//     PKI.KcatArgs and PKI.KgoOpts turn it into a Java .properties file,
//     kcat -X options and franz-go options. PlainJAAS and ScramJAAS are
//     the brokers' sasl.jaas.config values.
//   - StartSecureBroker(t, SecureOptions) and StartSecureCluster(t, n,
//     SecureOptions) start secured brokers: kbroker, or Apache Kafka 3.9.1
//     (ZooKeeper mode, compat/lib39) with SecureOptions.Kafka39, on the
//     same settings. Each SecureNode keeps a PLAINTEXT listener (Addr) for
//     the readiness probe and has its named secured listeners in
//     Listeners, each on a free port; kbroker's metrics listener is
//     MetricsAddr. Kill, Restart and SecureCluster.WaitReady as for Broker
//     and Cluster.
//   - DialWireTLS is DialWire over TLS; Wire.AppendRequest, WriteRaw and
//     WaitClosed let a test send frames no client would and see the
//     connection closed.
//   - StartNetCluster(t, n, overrides...) is StartCluster with ZooKeeper
//     and every broker in its own network namespace, joined through a
//     switch namespace whose FORWARD chain carries the faults (netns.go
//     draws the topology): Cut(a, b), Isolate(a), Partition(groups...),
//     Loss(a, b, p) and Slow(a, rate) each return a NetFault whose Heal
//     removes it; NetCluster.Heal removes them all. Nodes are NetNode: a
//     broker.id, NodeZK, or NodeClient (the test process). No netem in
//     this kernel: drops and tbf rate limits only, no delay or reordering.
//     Needs root; fails the test otherwise.
//   - KBROKER_APACHE_KAFKA=1 (Apache()) makes StartBroker and StartCluster
//     start Apache Kafka KRaft nodes from compat/lib instead of kbroker
//     (no ZooKeeper then; KAFKA_LOG_LEVEL and KAFKA_OPTS reach the JVM), to
//     check a test's expectations against the reference broker.
//
// Invariants: every process and listener is started by this package and
// ended by the test's cleanup, by its own handle (never by name); every wait
// is bounded by a deadline or a context.
//
// Locks: NetCluster.mu guards its list of faults in place (not held
// while running ip, iptables or tc). Broker.mu guards the running process of a Broker (kafka39Node.mu
// that of a secured Kafka 3.9.1 node); Proxy.mu guards
// the proxy's target and its open connections. Neither is held while
// waiting on a process or on the network. Wire.mu serialises the requests
// on one connection and is held for a request's round trip, which its
// context's deadline bounds.
package harness
