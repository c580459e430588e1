package server

import (
	"time"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// A log dir going offline (docs/log-dir-failure.md): its replicas here go
// offline, the controller is told through ZooKeeper and moves their
// leadership, and the broker keeps serving from its other dirs. With no
// dir left the broker cannot store anything, so it exits.

// logDirEventWriter is the ZooKeeper side's notification of a failed dir
// (zkbroker.Node through nodeControl).
type logDirEventWriter interface{ WriteLogDirEvent() error }

// logDirEventRetry and logDirEventPatience bound the retries of that
// notification while ZooKeeper is unreachable: the controller must hear of
// the failure to move leadership, but a broker that never reconnects is
// also one the controller will take for dead.
const (
	logDirEventRetry    = 500 * time.Millisecond
	logDirEventPatience = 5 * time.Minute
)

// sessionCloser ends the broker's ZooKeeper session (zkbroker.Node through
// nodeControl).
type sessionCloser interface{ CloseSession() }

// sessionClosePatience bounds the wait for ZooKeeper to confirm the
// session's end before a broker with no log dir left exits anyway.
const sessionClosePatience = 2 * time.Second

// onLogDirFailure is logstore's OnDirFailure.
func (b *Broker) onLogDirFailure(f logstore.DirFailure) {
	tps := make([]replica.TopicPartition, len(f.Partitions))
	for i, k := range f.Partitions {
		tps[i] = replica.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	}
	// Under the cluster lock, as LeaderAndIsr and StopReplica apply their
	// changes: none of them interleaves with this one.
	b.cluster.mu.Lock()
	offline := b.replicas.HandleLogDirFailure(tps)
	for _, p := range offline {
		switch p.Topic {
		case offsetsTopic:
			b.groups.UnloadPartition(p.Index)
		case txnTopic:
			b.txns.UnloadPartition(p.Index, -1)
		}
	}
	control := b.cluster.control
	b.cluster.mu.Unlock()
	b.logger.Error("log directory offline; its replicas on this broker are offline until restart",
		"dir", f.Dir, "partitions", len(tps), "hosted", len(offline), "err", f.Err)
	if f.AllFailed {
		// Its replicas are offline first, so that no waiting produce is
		// answered while the session closes.
		b.logger.Error("shutting down: every log directory has failed", "dirs", b.cfg.LogDirs, "last_failed", f.Dir, "err", f.Err)
		b.closeSessionBeforeHalt(control)
		b.halt(1)
		return
	}
	w, ok := control.(logDirEventWriter)
	if !ok {
		b.logger.Warn("no controller to tell of the failed log directory", "dir", f.Dir)
		return
	}
	// Not on the caller's goroutine: a checkpoint at shutdown may be the
	// one that found the failure.
	go b.announceLogDirFailure(w, f.Dir)
}

// announceLogDirFailure writes the log dir event notification, retrying
// while ZooKeeper cannot be reached.
func (b *Broker) announceLogDirFailure(w logDirEventWriter, dir string) {
	deadline := time.Now().Add(logDirEventPatience)
	for {
		err := w.WriteLogDirEvent()
		if err == nil {
			b.logger.Info("log directory failure announced to the controller", "dir", dir)
			return
		}
		if time.Now().After(deadline) {
			b.logger.Error("cannot announce the failed log directory", "dir", dir, "err", err)
			return
		}
		b.logger.Warn("cannot announce the failed log directory yet; retrying", "dir", dir, "err", err)
		time.Sleep(logDirEventRetry)
	}
}

// closeSessionBeforeHalt ends the ZooKeeper session of a broker about to
// exit, so that the controller moves its leaderships now rather than after
// the session timeout (Kafka halts without it). Nothing is lost by it: with
// every dir failed the broker can store nothing more.
func (b *Broker) closeSessionBeforeHalt(control ClusterControl) {
	sc, ok := control.(sessionCloser)
	if !ok {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc.CloseSession()
	}()
	select {
	case <-done:
		b.logger.Info("ZooKeeper session closed before exiting")
	case <-time.After(sessionClosePatience):
		b.logger.Warn("ZooKeeper session not closed in time; exiting anyway")
	}
}
