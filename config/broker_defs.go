package config

import (
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/metadataversion"
)

// brokerDef is one server.properties key Kafka knows and we accept. def is
// Kafka's default as text; a nullable key with an empty value is unset.
type brokerDef struct {
	name     string
	def      string
	typ      kmsg.ConfigType
	nullable bool
	apply    func(c *Config, v string) error
}

const (
	tBool   = kmsg.ConfigTypeBoolean
	tString = kmsg.ConfigTypeString
	tInt    = kmsg.ConfigTypeInt
	tShort  = kmsg.ConfigTypeShort
	tLong   = kmsg.ConfigTypeLong
	tDouble = kmsg.ConfigTypeDouble
	tList   = kmsg.ConfigTypeList
	// tPassword values are sensitive: DescribeConfigs never shows them.
	tPassword = kmsg.ConfigTypePassword

	maxLong = "9223372036854775807"
	maxInt  = "2147483647"
)

// brokerDefs lists Kafka 3.9's names and defaults (KafkaConfig.scala and the
// *Configs.java classes it reads). Keys that
// Load combines with others (retention and roll units, listeners, log.dirs)
// are only checked here and resolved in derive.
var brokerDefs = []brokerDef{
	{"broker.id", "0", tInt, false, i32(func(c *Config) *int32 { return &c.BrokerID }, atLeast(-1))},
	{"listeners", "PLAINTEXT://:9092", tString, false, check(tString, nil)},
	{"advertised.listeners", "", tString, true, check(tString, nil)},
	{"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", tString, false, check(tString, nil)},
	{"inter.broker.listener.name", "", tString, true, check(tString, nil)},
	{"security.inter.broker.protocol", "PLAINTEXT", tString, false, check(tString, oneOf(Plaintext, SSL, SASLPlaintext, SASLSSL))},
	{"inter.broker.protocol.version", metadataversion.Default, tString, false, func(c *Config, v string) error {
		ibp, err := metadataversion.Parse(v)
		c.InterBrokerProtocolVersion = ibp
		return err
	}},
	{"log.dirs", "", tString, true, check(tString, nil)},
	{"log.dir", "/tmp/kafka-logs", tString, false, check(tString, nil)},
	{"num.partitions", "1", tInt, false, i32(func(c *Config) *int32 { return &c.NumPartitions }, atLeast(1))},
	{"default.replication.factor", "1", tInt, false, i16(func(c *Config) *int16 { return &c.DefaultReplicationFactor }, atLeast(1))},
	{"auto.create.topics.enable", "true", tBool, false, boolean(func(c *Config) *bool { return &c.AutoCreateTopicsEnable })},
	{"delete.topic.enable", "true", tBool, false, boolean(func(c *Config) *bool { return &c.DeleteTopicEnable })},

	{"log.segment.bytes", "1073741824", tInt, false, i64(func(c *Config) *int64 { return &c.LogSegmentBytes }, tInt, atLeast(14))},
	{"log.roll.ms", "", tLong, true, check(tLong, atLeast(1))},
	{"log.roll.hours", "168", tInt, false, check(tInt, atLeast(1))},
	{"log.roll.jitter.ms", "", tLong, true, check(tLong, atLeast(0))},
	{"log.roll.jitter.hours", "0", tInt, false, check(tInt, atLeast(0))},
	{"log.retention.ms", "", tLong, true, check(tLong, nil)},
	{"log.retention.minutes", "", tInt, true, check(tInt, nil)},
	{"log.retention.hours", "168", tInt, false, check(tInt, nil)},
	{"log.retention.bytes", "-1", tLong, false, i64(func(c *Config) *int64 { return &c.LogRetentionBytes }, tLong, nil)},
	{"log.retention.check.interval.ms", "300000", tLong, false, ms(func(c *Config) *time.Duration { return &c.LogRetentionCheckInterval }, atLeast(1))},
	{"producer.id.expiration.ms", "86400000", tInt, false, ms(func(c *Config) *time.Duration { return &c.ProducerIDExpiration }, atLeast(1))},
	{"log.segment.delete.delay.ms", "60000", tLong, false, ms(func(c *Config) *time.Duration { return &c.LogSegmentDeleteDelay }, atLeast(0))},
	{"log.flush.interval.messages", maxLong, tLong, false, i64(func(c *Config) *int64 { return &c.LogFlushIntervalMessages }, tLong, atLeast(1))},
	{"log.flush.interval.ms", "", tLong, true, ms(func(c *Config) *time.Duration { return &c.LogFlushInterval }, nil)},
	{"log.flush.scheduler.interval.ms", maxLong, tLong, false, check(tLong, nil)},
	{"log.flush.offset.checkpoint.interval.ms", "60000", tInt, false, ms(func(c *Config) *time.Duration { return &c.LogFlushOffsetCheckpointInterval }, atLeast(0))},
	{"log.flush.start.offset.checkpoint.interval.ms", "60000", tInt, false, ms(func(c *Config) *time.Duration { return &c.LogFlushStartOffsetCheckpointInterval }, atLeast(0))},
	{"log.index.interval.bytes", "4096", tInt, false, i32(func(c *Config) *int32 { return &c.LogIndexIntervalBytes }, atLeast(0))},
	{"log.index.size.max.bytes", "10485760", tInt, false, i32(func(c *Config) *int32 { return &c.LogIndexSizeMaxBytes }, atLeast(4))},
	{"log.cleanup.policy", "delete", tList, false, list(func(c *Config) *[]string { return &c.LogCleanupPolicy }, listOf("compact", "delete"))},
	{"log.cleaner.enable", "true", tBool, false, check(tBool, nil)},
	{"log.cleaner.delete.retention.ms", "86400000", tLong, false, ms(func(c *Config) *time.Duration { return &c.LogCleanerDeleteRetention }, atLeast(0))},
	{"log.cleaner.min.compaction.lag.ms", "0", tLong, false, ms(func(c *Config) *time.Duration { return &c.LogCleanerMinCompactionLag }, atLeast(0))},
	{"log.cleaner.max.compaction.lag.ms", maxLong, tLong, false, ms(func(c *Config) *time.Duration { return &c.LogCleanerMaxCompactionLag }, atLeast(1))},
	{"log.cleaner.min.cleanable.ratio", "0.5", tDouble, false, ratio(func(c *Config) *float64 { return &c.LogCleanerMinCleanableRatio })},
	{"log.message.timestamp.type", "CreateTime", tString, false, str(func(c *Config) *string { return &c.LogMessageTimestampType }, oneOf("CreateTime", "LogAppendTime"))},
	{"log.message.timestamp.before.max.ms", maxLong, tLong, false, check(tLong, atLeast(0))},
	{"log.message.timestamp.after.max.ms", maxLong, tLong, false, check(tLong, atLeast(0))},
	{"log.preallocate", "false", tBool, false, boolean(func(c *Config) *bool { return &c.LogPreallocate })},
	{"log.local.retention.ms", "-2", tLong, false, check(tLong, atLeast(-2))},
	{"log.local.retention.bytes", "-2", tLong, false, check(tLong, atLeast(-2))},
	{"compression.type", "producer", tString, false, str(func(c *Config) *string { return &c.CompressionType }, oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"))},
	{"compression.gzip.level", "-1", tInt, false, check(tInt, gzipLevel)},
	{"compression.lz4.level", "9", tInt, false, check(tInt, between(1, 17))},
	{"compression.zstd.level", "3", tInt, false, check(tInt, between(-131072, 22))},
	{"message.max.bytes", "1048588", tInt, false, i32(func(c *Config) *int32 { return &c.MessageMaxBytes }, atLeast(0))},
	{"socket.request.max.bytes", "104857600", tInt, false, i32(func(c *Config) *int32 { return &c.SocketRequestMaxBytes }, atLeast(1))},
	{"connections.max.idle.ms", "600000", tLong, false, ms(func(c *Config) *time.Duration { return &c.ConnectionsMaxIdle }, nil)},
	// Kafka's default for queued.max.request.bytes is -1 (unlimited); unset
	// here means a share of the machine's memory (derive), -1 still means
	// unlimited.
	{"queued.max.request.bytes", "", tLong, true, check(tLong, nil)},
	{"queued.max.requests", "500", tInt, false, i32(func(c *Config) *int32 { return &c.QueuedMaxRequests }, atLeast(1))},
	{"quota.window.num", "11", tInt, false, i32(func(c *Config) *int32 { return &c.QuotaWindowNum }, atLeast(1))},
	{"quota.window.size.seconds", "1", tInt, false, i32(func(c *Config) *int32 { return &c.QuotaWindowSizeSeconds }, atLeast(1))},
	{"max.connections", maxInt, tInt, false, i32(func(c *Config) *int32 { return &c.MaxConnections }, atLeast(0))},
	{"max.connections.per.ip", maxInt, tInt, false, i32(func(c *Config) *int32 { return &c.MaxConnectionsPerIP }, atLeast(0))},
	{"max.connections.per.ip.overrides", "", tString, false, check(tString, nil)},
	{"max.connection.creation.rate", maxInt, tInt, false, i32(func(c *Config) *int32 { return &c.MaxConnectionCreationRate }, atLeast(0))},

	{"offsets.topic.num.partitions", "50", tInt, false, i32(func(c *Config) *int32 { return &c.OffsetsTopicNumPartitions }, atLeast(1))},
	{"offsets.topic.replication.factor", "3", tShort, false, i16(func(c *Config) *int16 { return &c.OffsetsTopicReplicationFactor }, atLeast(1))},
	{"offsets.retention.minutes", "10080", tInt, false, dur(func(c *Config) *time.Duration { return &c.OffsetsRetention }, time.Minute, atLeast(1))},
	{"group.initial.rebalance.delay.ms", "3000", tInt, false, ms(func(c *Config) *time.Duration { return &c.GroupInitialRebalanceDelay }, atLeast(0))},
	{"group.min.session.timeout.ms", "6000", tInt, false, ms(func(c *Config) *time.Duration { return &c.GroupMinSessionTimeout }, nil)},
	{"group.max.session.timeout.ms", "1800000", tInt, false, ms(func(c *Config) *time.Duration { return &c.GroupMaxSessionTimeout }, nil)},
	{"group.max.size", maxInt, tInt, false, i32(func(c *Config) *int32 { return &c.GroupMaxSize }, atLeast(1))},

	{"transaction.state.log.num.partitions", "50", tInt, false, i32(func(c *Config) *int32 { return &c.TransactionStateLogNumPartitions }, atLeast(1))},
	{"transaction.state.log.replication.factor", "3", tShort, false, i16(func(c *Config) *int16 { return &c.TransactionStateLogReplicationFactor }, atLeast(1))},
	{"transaction.state.log.min.isr", "2", tInt, false, i32(func(c *Config) *int32 { return &c.TransactionStateLogMinIsr }, atLeast(1))},
	{"transaction.state.log.segment.bytes", "104857600", tInt, false, i32(func(c *Config) *int32 { return &c.TransactionStateLogSegmentBytes }, atLeast(1))},
	{"transaction.state.log.load.buffer.size", "5242880", tInt, false, check(tInt, atLeast(1))},
	{"transaction.max.timeout.ms", "900000", tInt, false, ms(func(c *Config) *time.Duration { return &c.TransactionMaxTimeout }, atLeast(1))},
	{"transactional.id.expiration.ms", "604800000", tInt, false, ms(func(c *Config) *time.Duration { return &c.TransactionalIDExpiration }, atLeast(1))},
	{"transaction.abort.timed.out.transaction.cleanup.interval.ms", "10000", tInt, false, ms(func(c *Config) *time.Duration { return &c.TransactionAbortTimedOutCleanupInterval }, atLeast(1))},
	{"transaction.remove.expired.transaction.cleanup.interval.ms", "3600000", tInt, false, ms(func(c *Config) *time.Duration { return &c.TransactionRemoveExpiredCleanupInterval }, atLeast(1))},
	{"transaction.partition.verification.enable", "true", tBool, false, boolean(func(c *Config) *bool { return &c.TransactionPartitionVerificationEnable })},

	{"min.insync.replicas", "1", tInt, false, i32(func(c *Config) *int32 { return &c.MinInsyncReplicas }, atLeast(1))},
	{"unclean.leader.election.enable", "false", tBool, false, boolean(func(c *Config) *bool { return &c.UncleanLeaderElectionEnable })},
	{"broker.rack", "", tString, true, str(func(c *Config) *string { return &c.BrokerRack }, nil)},
	{"replica.selector.class", "", tString, true, str(func(c *Config) *string { return &c.ReplicaSelectorClass }, replicaSelectorClass)},

	{"zookeeper.connect", "", tString, true, str(func(c *Config) *string { return &c.ZookeeperConnect }, nil)},
	{"zookeeper.session.timeout.ms", "18000", tInt, false, ms(func(c *Config) *time.Duration { return &c.ZookeeperSessionTimeout }, atLeast(1))},
	{"zookeeper.connection.timeout.ms", "", tInt, true, ms(func(c *Config) *time.Duration { return &c.ZookeeperConnectionTimeout }, atLeast(1))},
	{"zookeeper.set.acl", "false", tBool, false, check(tBool, nil)},
	{"controlled.shutdown.enable", "true", tBool, false, boolean(func(c *Config) *bool { return &c.ControlledShutdownEnable })},
	{"controlled.shutdown.max.retries", "3", tInt, false, i32(func(c *Config) *int32 { return &c.ControlledShutdownMaxRetries }, nil)},
	{"controlled.shutdown.retry.backoff.ms", "5000", tLong, false, ms(func(c *Config) *time.Duration { return &c.ControlledShutdownRetryBackoff }, nil)},
	{"auto.leader.rebalance.enable", "true", tBool, false, boolean(func(c *Config) *bool { return &c.AutoLeaderRebalanceEnable })},
	{"leader.imbalance.check.interval.seconds", "300", tLong, false, dur(func(c *Config) *time.Duration { return &c.LeaderImbalanceCheckInterval }, time.Second, atLeast(1))},
	{"leader.imbalance.per.broker.percentage", "10", tInt, false, i32(func(c *Config) *int32 { return &c.LeaderImbalancePerBrokerPercentage }, nil)},

	{"replica.lag.time.max.ms", "30000", tLong, false, ms(func(c *Config) *time.Duration { return &c.ReplicaLagTimeMax }, nil)},
	{"replica.fetch.wait.max.ms", "500", tInt, false, ms(func(c *Config) *time.Duration { return &c.ReplicaFetchWaitMax }, nil)},
	{"replica.fetch.min.bytes", "1", tInt, false, i32(func(c *Config) *int32 { return &c.ReplicaFetchMinBytes }, nil)},
	{"replica.fetch.max.bytes", "1048576", tInt, false, i32(func(c *Config) *int32 { return &c.ReplicaFetchMaxBytes }, atLeast(0))},
	{"replica.fetch.response.max.bytes", "10485760", tInt, false, i32(func(c *Config) *int32 { return &c.ReplicaFetchResponseMaxBytes }, atLeast(0))},
	{"replica.fetch.backoff.ms", "1000", tInt, false, ms(func(c *Config) *time.Duration { return &c.ReplicaFetchBackoff }, atLeast(0))},
	{"replica.socket.timeout.ms", "30000", tInt, false, ms(func(c *Config) *time.Duration { return &c.ReplicaSocketTimeout }, nil)},
	{"replica.high.watermark.checkpoint.interval.ms", "5000", tLong, false, ms(func(c *Config) *time.Duration { return &c.ReplicaHighWatermarkCheckpointInterval }, nil)},
	{"num.replica.fetchers", "1", tInt, false, i32(func(c *Config) *int32 { return &c.NumReplicaFetchers }, atLeast(1))},
	{"num.recovery.threads.per.data.dir", "1", tInt, false, i32(func(c *Config) *int32 { return &c.NumRecoveryThreadsPerDataDir }, atLeast(1))},

	// Accepted so that Kafka's own server.properties loads without warnings,
	// and ignored: goroutines replace Kafka's network and IO thread pools,
	// and the kernel sizes socket buffers.
	{"num.network.threads", "3", tInt, false, check(tInt, atLeast(1))},
	{"num.io.threads", "8", tInt, false, check(tInt, atLeast(1))},
	{"socket.send.buffer.bytes", "102400", tInt, false, check(tInt, nil)},
	{"socket.receive.buffer.bytes", "102400", tInt, false, check(tInt, nil)},

	// Security (Kafka's SslConfigs, BrokerSecurityConfigs and the
	// authorizer's own keys). Every ssl.* and sasl.* key may also be given
	// per listener as listener.name.<listener>.<key>.
	{"ssl.protocol", "TLSv1.3", tString, false, check(tString, nil)},
	{"ssl.provider", "", tString, true, check(tString, nil)},
	{"ssl.cipher.suites", "", tList, true, check(tList, nil)},
	{"ssl.enabled.protocols", "TLSv1.2,TLSv1.3", tList, false, check(tList, nil)},
	{"ssl.keystore.type", "JKS", tString, false, check(tString, nil)},
	{"ssl.keystore.location", "", tString, true, check(tString, nil)},
	{"ssl.keystore.password", "", tPassword, true, check(tString, nil)},
	{"ssl.key.password", "", tPassword, true, check(tString, nil)},
	{"ssl.keystore.key", "", tPassword, true, check(tString, nil)},
	{"ssl.keystore.certificate.chain", "", tPassword, true, check(tString, nil)},
	{"ssl.truststore.type", "JKS", tString, false, check(tString, nil)},
	{"ssl.truststore.location", "", tString, true, check(tString, nil)},
	{"ssl.truststore.password", "", tPassword, true, check(tString, nil)},
	{"ssl.truststore.certificates", "", tPassword, true, check(tString, nil)},
	{"ssl.keymanager.algorithm", "SunX509", tString, false, check(tString, nil)},
	{"ssl.trustmanager.algorithm", "PKIX", tString, false, check(tString, nil)},
	{"ssl.endpoint.identification.algorithm", "https", tString, false, check(tString, nil)},
	{"ssl.secure.random.implementation", "", tString, true, check(tString, nil)},
	{"ssl.client.auth", "none", tString, false, check(tString, oneOf("required", "requested", "none"))},
	{"ssl.principal.mapping.rules", "DEFAULT", tString, false, check(tString, nil)},
	{"sasl.enabled.mechanisms", "GSSAPI", tList, false, check(tList, nil)},
	{"sasl.mechanism.inter.broker.protocol", "GSSAPI", tString, false, check(tString, nil)},
	{"sasl.server.max.receive.size", "524288", tInt, false, check(tInt, atLeast(1))},
	{"sasl.kerberos.service.name", "", tString, true, check(tString, nil)},
	{"connections.max.reauth.ms", "0", tLong, false, check(tLong, atLeast(0))},
	{"principal.builder.class", "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder", tString, false, check(tString, oneOf("org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"))},
	{"authorizer.class.name", "", tString, false, str(func(c *Config) *string { return &c.AuthorizerClassName }, nil)},
	{"super.users", "", tString, true, check(tString, nil)},
	{"allow.everyone.if.no.acl.found", "false", tBool, false, boolean(func(c *Config) *bool { return &c.AllowEveryoneIfNoACLFound })},

	{"metrics.listener", "", tString, true, str(func(c *Config) *string { return &c.MetricsListener }, nil)},
	{"pprof.enable", "false", tBool, false, boolean(func(c *Config) *bool { return &c.PprofEnable })},
	// kbroker's own: how often the controller probes every broker, and the
	// brokers the controller, to act on a failure before the ZooKeeper
	// session expires; 0 turns probing off (Kafka's behaviour).
	{"broker.probe.interval.ms", "250", tInt, false, ms(func(c *Config) *time.Duration { return &c.BrokerProbeInterval }, atLeast(0))},
	// kbroker's own: the online replica audit (docs/replica-audit.md); an
	// interval of 0 turns it off.
	{"replica.audit.interval.ms", "300000", tLong, false, ms(func(c *Config) *time.Duration { return &c.ReplicaAuditInterval }, atLeast(0))},
	{"replica.audit.max.bytes.per.sec", "1048576", tLong, false, i64(func(c *Config) *int64 { return &c.ReplicaAuditMaxBytesPerSec }, tLong, atLeast(1))},
}

var brokerDefIndex = func() map[string]int {
	m := make(map[string]int, len(brokerDefs))
	for i, d := range brokerDefs {
		m[d.name] = i
	}
	return m
}()

func gzipLevel(n int64) error {
	if n == -1 || (n >= 1 && n <= 9) {
		return nil
	}
	return between(1, 9)(n)
}

// check only validates; the value is read again in derive, or ignored.
func check(t kmsg.ConfigType, rule any) func(*Config, string) error {
	return func(_ *Config, v string) error { return validate(t, rule, v) }
}

// validate parses v as t and applies rule, a func(int64) error for
// integer types or a func(string) error for any type.
func validate(t kmsg.ConfigType, rule any, v string) error {
	if err := parseTyped(t, v); err != nil {
		return err
	}
	switch r := rule.(type) {
	case func(int64) error:
		if r != nil {
			n, _ := strconv.ParseInt(v, 10, 64)
			return r(n)
		}
	case func(string) error:
		if r != nil {
			return r(v)
		}
	}
	return nil
}

func i64(f func(*Config) *int64, t kmsg.ConfigType, rule func(int64) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if err := validate(t, rule, v); err != nil {
			return err
		}
		*f(c), _ = strconv.ParseInt(v, 10, 64)
		return nil
	}
}

func i32(f func(*Config) *int32, rule func(int64) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if err := validate(tInt, rule, v); err != nil {
			return err
		}
		n, _ := strconv.ParseInt(v, 10, 32)
		*f(c) = int32(n)
		return nil
	}
}

// i16 also serves INT keys stored as a replication factor: Kafka keeps
// default.replication.factor in an INT but CreateTopics carries an int16.
func i16(f func(*Config) *int16, rule func(int64) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if err := validate(tShort, rule, v); err != nil {
			return err
		}
		n, _ := strconv.ParseInt(v, 10, 16)
		*f(c) = int16(n)
		return nil
	}
}

func dur(f func(*Config) *time.Duration, unit time.Duration, rule func(int64) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if err := validate(tLong, rule, v); err != nil {
			return err
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		*f(c) = msDuration(n, unit)
		return nil
	}
}

func ms(f func(*Config) *time.Duration, rule func(int64) error) func(*Config, string) error {
	return dur(f, time.Millisecond, rule)
}

func boolean(f func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := parseBool(v)
		*f(c) = b
		return err
	}
}

func str(f func(*Config) *string, rule func(string) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if rule != nil {
			if err := rule(v); err != nil {
				return err
			}
		}
		*f(c) = v
		return nil
	}
}

func list(f func(*Config) *[]string, rule func(string) error) func(*Config, string) error {
	return func(c *Config, v string) error {
		if err := rule(v); err != nil {
			return err
		}
		*f(c) = parseList(v)
		return nil
	}
}

func ratio(f func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return parseTyped(tDouble, v)
		}
		if x < 0 || x > 1 {
			return errors.New("value must be no less than 0 and no more than 1")
		}
		*f(c) = x
		return nil
	}
}
