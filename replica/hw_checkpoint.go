package replica

import (
	"context"
	"path/filepath"
	"time"

	"github.com/kbroker/kbroker/logstore"
)

// High watermarks are persisted per log dir in replication-offset-checkpoint,
// every replica.high.watermark.checkpoint.interval.ms and at shutdown, for
// every hosted partition, leader or follower. A replica created after a
// restart starts from the checkpointed HW (clamped to its log) rather than
// 0, so consumers do not lose sight of committed records while followers
// catch up.

// CheckpointHighWatermarks writes every log dir's HW checkpoint.
func (m *Manager) CheckpointHighWatermarks() {
	hws := map[TopicPartition]int64{}
	for _, p := range m.Partitions() {
		hws[TopicPartition{p.Topic, p.Index}] = p.HighWatermark()
	}
	byDir := map[string][]logstore.CheckpointEntry{}
	for _, dir := range m.cfg.Logs.Dirs() {
		if !m.cfg.Logs.DirOffline(dir) {
			byDir[dir] = []logstore.CheckpointEntry{}
		}
	}
	for _, pl := range m.cfg.Logs.All() {
		if _, online := byDir[pl.Dir]; !online {
			continue
		}
		if hw, ok := hws[TopicPartition{pl.Topic, pl.Partition}]; ok {
			byDir[pl.Dir] = append(byDir[pl.Dir], logstore.CheckpointEntry{Topic: pl.Topic, Partition: pl.Partition, Offset: hw})
		}
	}
	for dir, entries := range byDir {
		if err := logstore.WriteCheckpoint(filepath.Join(dir, HwCheckpointFile), entries); err != nil {
			m.cfg.Logger.Error("cannot write the high-watermark checkpoint", "dir", dir, "err", err)
			m.cfg.Logs.MarkDirOffline(dir, err)
		}
	}
}

// readHighWatermarks loads the checkpointed HWs of every log dir.
func (m *Manager) readHighWatermarks() map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for _, dir := range m.cfg.Logs.Dirs() {
		entries, err := logstore.ReadCheckpoint(filepath.Join(dir, HwCheckpointFile))
		if err != nil {
			m.cfg.Logger.Warn("ignoring an unreadable high-watermark checkpoint", "dir", dir, "err", err)
			continue
		}
		for _, e := range entries {
			out[TopicPartition{e.Topic, e.Partition}] = e.Offset
		}
	}
	return out
}

// RunHighWatermarkCheckpoints checkpoints until ctx ends; the broker
// checkpoints once more after every writer has stopped.
func (m *Manager) RunHighWatermarkCheckpoints(ctx context.Context, interval time.Duration) {
	runEvery(ctx, interval, 5*time.Second, m.CheckpointHighWatermarks)
}
