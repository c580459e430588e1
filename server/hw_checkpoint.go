package server

import (
	"context"
	"path/filepath"
	"time"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// High watermarks are persisted per log dir in replication-offset-checkpoint
// (Kafka's file format), every replica.high.watermark.checkpoint.interval.ms and
// at shutdown, for every hosted partition, leader or follower. A replica
// created after a restart starts from the checkpointed HW (clamped to its
// log) rather than 0, so consumers do not lose sight of committed records
// while followers catch up.

const hwCheckpointFile = "replication-offset-checkpoint"

// hostedPartitions lists every partition this broker hosts.
func (b *Broker) hostedPartitions() []*replica.Partition {
	b.cluster.mu.Lock()
	defer b.cluster.mu.Unlock()
	out := make([]*replica.Partition, 0, len(b.cluster.hosted))
	for _, p := range b.cluster.hosted {
		out = append(out, p)
	}
	return out
}

// checkpointHighWatermarks writes every log dir's HW checkpoint.
func (b *Broker) checkpointHighWatermarks() {
	hws := map[TopicPartition]int64{}
	for _, p := range b.hostedPartitions() {
		hws[TopicPartition{p.Topic, p.Index}] = p.HighWatermark()
	}
	byDir := map[string][]logstore.CheckpointEntry{}
	for _, dir := range b.logs.Dirs() {
		byDir[dir] = []logstore.CheckpointEntry{}
	}
	for _, pl := range b.logs.All() {
		if hw, ok := hws[TopicPartition{pl.Topic, pl.Partition}]; ok {
			byDir[pl.Dir] = append(byDir[pl.Dir], logstore.CheckpointEntry{Topic: pl.Topic, Partition: pl.Partition, Offset: hw})
		}
	}
	for dir, entries := range byDir {
		if err := logstore.WriteCheckpoint(filepath.Join(dir, hwCheckpointFile), entries); err != nil {
			b.logger.Error("cannot write the high-watermark checkpoint", "dir", dir, "err", err)
		}
	}
}

// readHighWatermarks loads the checkpointed HWs of every log dir.
func (b *Broker) readHighWatermarks() map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for _, dir := range b.logs.Dirs() {
		entries, err := logstore.ReadCheckpoint(filepath.Join(dir, hwCheckpointFile))
		if err != nil {
			b.logger.Warn("ignoring an unreadable high-watermark checkpoint", "dir", dir, "err", err)
			continue
		}
		for _, e := range entries {
			out[TopicPartition{e.Topic, e.Partition}] = e.Offset
		}
	}
	return out
}

// runHighWatermarkCheckpoints checkpoints until ctx ends; Run checkpoints
// once more after every writer has stopped.
func (b *Broker) runHighWatermarkCheckpoints(ctx context.Context) {
	runEvery(ctx, b.cfg.ReplicaHighWatermarkCheckpointInterval, 5*time.Second, b.checkpointHighWatermarks)
}

// runEvery calls fn every interval (fallback when interval is not
// positive) until ctx ends.
func runEvery(ctx context.Context, interval, fallback time.Duration, fn func()) {
	if interval <= 0 {
		interval = fallback
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
