package config

import (
	"strconv"
	"strings"

	"github.com/kbroker/kbroker/logstore"
)

// LogDefaults maps the broker's log.* settings to the per-topic log
// settings a topic without overrides gets.
func (c *Config) LogDefaults() logstore.Config {
	return logstore.Config{
		SegmentBytes:       c.LogSegmentBytes,
		SegmentMs:          Millis(c.LogRoll),
		RetentionMs:        Millis(c.LogRetention),
		RetentionBytes:     c.LogRetentionBytes,
		CleanupPolicy:      strings.Join(c.LogCleanupPolicy, ","),
		FlushMessages:      c.LogFlushIntervalMessages,
		FlushMs:            Millis(c.LogFlushInterval),
		IndexIntervalBytes: int(c.LogIndexIntervalBytes),
		MaxIndexBytes:      int(c.LogIndexSizeMaxBytes),
		DeleteRetentionMs:  Millis(c.LogCleanerDeleteRetention),
		MinCompactionLagMs: Millis(c.LogCleanerMinCompactionLag),
	}
}

// TopicLogConfig applies a topic's overrides to LogDefaults. The overrides
// are expected to have passed ValidateTopicConfigs; a value that does not
// parse is skipped so that a bad znode cannot stop a log from loading.
func (c *Config) TopicLogConfig(overrides map[string]string) logstore.Config {
	lc := c.LogDefaults()
	setInt64 := func(dst *int64, v string) {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			*dst = n
		}
	}
	setInt := func(dst *int, v string) {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err == nil {
			*dst = int(n)
		}
	}
	for k, v := range overrides {
		switch k {
		case "segment.bytes":
			setInt64(&lc.SegmentBytes, v)
		case "segment.ms":
			setInt64(&lc.SegmentMs, v)
		case "retention.ms":
			setInt64(&lc.RetentionMs, v)
		case "retention.bytes":
			setInt64(&lc.RetentionBytes, v)
		case "cleanup.policy":
			lc.CleanupPolicy = strings.Join(parseList(v), ",")
		case "flush.messages":
			setInt64(&lc.FlushMessages, v)
		case "flush.ms":
			setInt64(&lc.FlushMs, v)
		case "index.interval.bytes":
			setInt(&lc.IndexIntervalBytes, v)
		case "segment.index.bytes":
			setInt(&lc.MaxIndexBytes, v)
		case "delete.retention.ms":
			setInt64(&lc.DeleteRetentionMs, v)
		case "min.compaction.lag.ms":
			setInt64(&lc.MinCompactionLagMs, v)
		}
	}
	if lc.RetentionMs < 0 {
		lc.RetentionMs = -1
	}
	return lc
}
