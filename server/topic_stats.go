package server

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicStats are Kafka's BrokerTopicMetrics meters (BrokerTopicStats in
// KafkaRequestHandler.scala), as counters: one set per topic, carried by
// the topic table's entry, and one for all topics. The produce and fetch
// paths find a topic's set on the *Topic they already hold, so counting is
// an atomic add, no lookup; a topic's series go when it leaves the table.
type topicStats struct {
	messagesIn, bytesIn, bytesOut, bytesRejected    atomic.Uint64
	failedProduce, failedFetch, totalProduce, total atomic.Uint64
}

// Counter indexes, in the order of topicStatNames.
const (
	statMessagesIn = iota
	statBytesIn
	statBytesOut
	statBytesRejected
	statFailedProduce
	statFailedFetch
	statTotalProduce
	statTotalFetch
	numTopicStats
)

var topicStatNames = [numTopicStats]struct{ name, help string }{
	{"messagesin", "Records appended as leader (MessagesInPerSec)."},
	{"bytesin", "Bytes of produced records appended as leader (BytesInPerSec)."},
	{"bytesout", "Record bytes sent to consumers, not followers (BytesOutPerSec)."},
	{"bytesrejected", "Bytes of produced partitions refused for a batch above max.message.bytes (BytesRejectedPerSec)."},
	{"failedproducerequests", "Produced partitions that failed other than for a known client-side cause (FailedProduceRequestsPerSec)."},
	{"failedfetchrequests", "Fetched partitions whose read failed other than for a known client-side cause (FailedFetchRequestsPerSec)."},
	{"totalproducerequests", "Produced partitions, authorized and of an existing topic (TotalProduceRequestsPerSec)."},
	{"totalfetchrequests", "Fetched partitions of an existing topic, consumers and followers (TotalFetchRequestsPerSec)."},
}

func (s *topicStats) counter(i int) *atomic.Uint64 {
	switch i {
	case statMessagesIn:
		return &s.messagesIn
	case statBytesIn:
		return &s.bytesIn
	case statBytesOut:
		return &s.bytesOut
	case statBytesRejected:
		return &s.bytesRejected
	case statFailedProduce:
		return &s.failedProduce
	case statFailedFetch:
		return &s.failedFetch
	case statTotalProduce:
		return &s.totalProduce
	default:
		return &s.total
	}
}

// brokerTopicStats is the broker's BrokerTopicStats: allTopics and the
// per-topic sets hung on the topic table.
type brokerTopicStats struct {
	all topicStats
}

// add counts n on counter i of t's set (nil: a topic not in the table,
// which Kafka would not count either) and on the broker's.
func (b *brokerTopicStats) add(t *topicStats, i int, n uint64) {
	if t == nil || n == 0 {
		return
	}
	t.counter(i).Add(n)
	b.all.counter(i).Add(n)
}

// producedPartition books one partition of a Produce request as Kafka's
// ReplicaManager.appendToLocalLog does: counted once it passed
// authorization for a known topic; records and bytes when appended; a
// failure unless its cause is one of the client's that Kafka leaves out
// (unknown partition, not leader, too large, corrupt, storage error,
// an internal topic).
func (b *brokerTopicStats) producedPartition(t *topicStats, bytes int, records int64, err error) {
	b.add(t, statTotalProduce, 1)
	switch {
	case err == nil:
		b.add(t, statBytesIn, uint64(bytes))
		b.add(t, statMessagesIn, uint64(max(records, 0)))
	case errCode(err) == kerr.MessageTooLarge.Code:
		// UnifiedLog marks the rejected bytes where it refuses a batch
		// above max.message.bytes, the whole partition's records.
		b.add(t, statBytesRejected, uint64(bytes))
	case expectedProduceError(err):
	default:
		b.add(t, statFailedProduce, 1)
	}
}

func expectedProduceError(err error) bool {
	switch errCode(err) {
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code,
		kerr.CorruptMessage.Code, kerr.KafkaStorageError.Code, kerr.InvalidTopicException.Code:
		return true
	}
	return false
}

// fetchedPartition books one partition of a fetch when it was first read
// (ReplicaManager.fetchMessages; re-reads after a wait are not counted),
// err being the read's error.
func (b *brokerTopicStats) fetchedPartition(t *topicStats, err error) {
	b.add(t, statTotalFetch, 1)
	if err != nil && !expectedFetchError(err) {
		b.add(t, statFailedFetch, 1)
	}
}

// expectedFetchError are the exceptions ReplicaManager.readFromLog leaves
// out of FailedFetchRequestsPerSec, and OffsetOutOfRange, which it answers.
func expectedFetchError(err error) bool {
	switch errCode(err) {
	case kerr.UnknownTopicOrPartition.Code, kerr.NotLeaderForPartition.Code, kerr.UnknownLeaderEpoch.Code, kerr.FencedLeaderEpoch.Code,
		kerr.ReplicaNotAvailable.Code, kerr.KafkaStorageError.Code, kerr.InconsistentTopicID.Code, kerr.OffsetOutOfRange.Code, kerr.UnknownTopicID.Code:
		return true
	}
	return false
}

// topicStatsCollector reports the counters at scrape time: the broker's,
// and each topic's that counted anything, walking the topic table (no
// lock, no store read).
type topicStatsCollector struct {
	b             *Broker
	all, perTopic [numTopicStats]*prometheus.Desc
}

func newTopicStatsCollector(b *Broker) *topicStatsCollector {
	c := &topicStatsCollector{b: b}
	for i, n := range topicStatNames {
		name := "kafka_server_brokertopicmetrics_" + n.name + "_total"
		c.all[i] = prometheus.NewDesc(name, n.help, nil, nil)
		c.perTopic[i] = prometheus.NewDesc(name, n.help, []string{"topic"}, nil)
	}
	return c
}

// Describe describes nothing: the collector is unchecked, because Kafka's
// names carry the broker-wide series without a topic label and the
// per-topic ones with it, under one name, which a checked collector may
// not report.
func (c *topicStatsCollector) Describe(chan<- *prometheus.Desc) {}

func (c *topicStatsCollector) Collect(ch chan<- prometheus.Metric) {
	for i := range c.all {
		ch <- prometheus.MustNewConstMetric(c.all[i], prometheus.CounterValue, float64(c.b.topicStats.all.counter(i).Load()))
	}
	var vals [numTopicStats]uint64
	for name, t := range c.b.topicsSnap.Load().byName {
		if t.stats == nil {
			continue
		}
		used := false
		for i := range vals {
			vals[i] = t.stats.counter(i).Load()
			used = used || vals[i] != 0
		}
		// Kafka makes a topic's meters on first use: a topic this broker
		// never served has none.
		if !used {
			continue
		}
		for i, v := range vals {
			ch <- prometheus.MustNewConstMetric(c.perTopic[i], prometheus.CounterValue, float64(v), name)
		}
	}
}
