package logstore

import (
	"context"
	"errors"
	"path/filepath"
	"time"
)

// Checkpoint writes recovery-point-offset-checkpoint and
// log-start-offset-checkpoint in every dir (Kafka's LogManager checkpoints).
func (m *Manager) Checkpoint() error {
	all := m.All()
	var errs []error
	for _, d := range m.dirs {
		if m.DirOffline(d.path) {
			continue
		}
		var rp, ls []CheckpointEntry
		for _, p := range all {
			if p.Dir != d.path {
				continue
			}
			fl := p.Log.(*FileLog)
			rp = append(rp, CheckpointEntry{p.Topic, p.Partition, fl.RecoveryPoint()})
			if lso := fl.LogStartOffset(); lso > fl.firstSegmentBase() {
				ls = append(ls, CheckpointEntry{p.Topic, p.Partition, lso})
			}
		}
		err := errors.Join(
			WriteCheckpoint(filepath.Join(d.path, recoveryCheckpointFile), rp),
			WriteCheckpoint(filepath.Join(d.path, logStartCheckpointFile), ls))
		if isStorageFailure(err) {
			m.dirFailed(d, err)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run does the periodic maintenance until ctx ends: retention and
// compaction, flush.ms flushes, and checkpoints.
func (m *Manager) Run(ctx context.Context) {
	retention := time.NewTicker(m.opts.RetentionCheckInterval)
	flush := time.NewTicker(m.opts.FlushCheckInterval)
	checkpoint := time.NewTicker(m.opts.CheckpointInterval)
	defer retention.Stop()
	defer flush.Stop()
	defer checkpoint.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-retention.C:
			m.MaintainAll(now)
		case now := <-flush.C:
			for _, p := range m.All() {
				if err := p.Log.(*FileLog).flushIfDue(now); err != nil && !errors.Is(err, ErrClosed) {
					m.logger.Warn("flush", "topic", p.Topic, "partition", p.Partition, "err", err)
				}
			}
		case <-checkpoint.C:
			if err := m.Checkpoint(); err != nil {
				m.logger.Warn("checkpoint", "err", err)
			}
		}
	}
}

// MaintainAll runs retention and compaction on every log once.
func (m *Manager) MaintainAll(now time.Time) {
	for _, p := range m.All() {
		if err := p.Log.Maintain(now); err != nil && !errors.Is(err, ErrClosed) {
			m.logger.Warn("log maintenance", "topic", p.Topic, "partition", p.Partition, "err", err)
		}
	}
}

// Close flushes and closes every log, writes the checkpoints and marks
// each dir cleanly shut down, then releases the dir locks.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	var errs []error
	for _, p := range m.All() {
		errs = append(errs, p.Log.Close())
	}
	errs = append(errs, m.Checkpoint())
	if err := errors.Join(errs...); err == nil {
		for _, d := range m.dirs {
			if m.DirOffline(d.path) {
				// Its logs were never closed: the next start recovers them.
				continue
			}
			errs = append(errs, WriteFileAtomic(filepath.Join(d.path, cleanShutdownFile), []byte(`{"version":0,"brokerEpoch":-1}`)))
		}
	}
	m.unlockDirs()
	return errors.Join(errs...)
}
