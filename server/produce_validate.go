package server

import (
	"errors"
	"math"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
)

// topicSetting is a topic config's effective value: the topic's override,
// else the broker default.
func (b *Broker) topicSetting(t *Topic, name string) string {
	if v, ok := t.Configs[name]; ok {
		return v
	}
	v, _ := b.current().TopicDefault(name)
	return v
}

func (b *Broker) topicSettingInt(t *Topic, name string, def int64) int64 {
	n, err := strconv.ParseInt(b.topicSetting(t, name), 10, 64)
	if err != nil {
		return def
	}
	return n
}

// produceRules are the topic settings a produce request is checked against,
// read once per topic per request.
type produceRules struct {
	maxMessageBytes int64
	logAppendTime   bool
	beforeMaxMs     int64
	afterMaxMs      int64
}

func (b *Broker) produceRules(t *Topic) produceRules {
	return produceRules{
		maxMessageBytes: b.topicSettingInt(t, "max.message.bytes", int64(b.current().MessageMaxBytes)),
		logAppendTime:   b.topicSetting(t, "message.timestamp.type") == "LogAppendTime",
		beforeMaxMs:     b.topicSettingInt(t, "message.timestamp.before.max.ms", math.MaxInt64),
		afterMaxMs:      b.topicSettingInt(t, "message.timestamp.after.max.ms", math.MaxInt64),
	}
}

// validateProduce parses and checks one partition's records. Produce v3+
// carries exactly one magic-v2 batch per partition (Kafka's
// ProduceRequest.validateRecords); the checks follow LogValidator.
func validateProduce(records []byte, version int16, rules produceRules, now int64) ([]logstore.Batch, error) {
	batches, err := logstore.ParseBatches(records)
	if err != nil {
		return nil, err
	}
	if len(batches) != 1 {
		return nil, kerr.InvalidRecord
	}
	bt := &batches[0]
	h := &bt.Header
	if int64(len(bt.Raw)) > rules.maxMessageBytes {
		return nil, kerr.MessageTooLarge
	}
	if h.IsControl() {
		return nil, kerr.InvalidRecord // clients may not write control batches
	}
	if h.Compression() == logstore.CompressionZstd && version < 7 {
		return nil, kerr.UnsupportedCompressionType
	}
	if h.Compression() > logstore.CompressionZstd {
		return nil, kerr.InvalidRecord
	}
	// Kafka's LogValidator: the offset range and the record count agree,
	// and a batch holds at least one record.
	if h.NumRecords <= 0 || int64(h.NumRecords) != int64(h.LastOffsetDelta)+1 {
		return nil, kerr.InvalidRecord
	}
	if !rules.logAppendTime {
		if err := checkTimestamps(bt, rules, now); err != nil {
			return nil, err
		}
	}
	return batches, nil
}

// checkTimestamps applies message.timestamp.before.max.ms and
// after.max.ms to CreateTime records. The batch's MaxTimestamp bounds the
// future side without decoding records; the past side needs every record's
// timestamp, so records are decoded only when that bound is configured.
func checkTimestamps(bt *logstore.Batch, rules produceRules, now int64) error {
	if rules.afterMaxMs < math.MaxInt64-now && bt.Header.MaxTimestamp > now+rules.afterMaxMs {
		return kerr.InvalidTimestamp
	}
	if rules.beforeMaxMs >= now {
		return nil
	}
	recs, err := logstore.DecodeRecords(*bt)
	if err != nil {
		if errors.Is(err, logstore.ErrCorruptMessage) {
			return kerr.CorruptMessage
		}
		return kerr.InvalidRecord
	}
	for i := range recs {
		ts := logstore.RecordTimestamp(&bt.Header, &recs[i])
		if ts < now-rules.beforeMaxMs || (rules.afterMaxMs < math.MaxInt64-now && ts > now+rules.afterMaxMs) {
			return kerr.InvalidTimestamp
		}
	}
	return nil
}
