package cluster

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/kbroker/kbroker/compat/harness"
)

// shutdownScene is a cluster with a topic, its controller, the partition
// states, and a broker to stop that leads partitions and is not the
// controller.
type shutdownScene struct {
	c      *harness.Cluster
	conn   *zk.Conn
	ctrl   int32
	before map[int32]partitionState
	victim int32
}

func startShutdownScene(t *testing.T, topic string, partitions int32) shutdownScene {
	t.Helper()
	c, conn := startWithTopic(t, topic, partitions)
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)
	before := mustStates(t, conn, topic, partitions)
	return shutdownScene{c, conn, ctrl, before, leaderNotController(t, c, before, ctrl)}
}

// Issue 3 acceptance: SIGTERM a broker; its leaderships move away before
// it exits, so no partition is left leaderless or led by it, and a
// producer running throughout sees no non-retriable error.
func TestControlledShutdown(t *testing.T) {
	const topic, partitions = "shutdown", 6
	s := startShutdownScene(t, topic, partitions)
	c, conn, ctrl, before, victim := s.c, s.conn, s.ctrl, s.before, s.victim
	t.Logf("SIGTERM to broker %d, leader of %v (controller %d)", victim, partitionsLedBy(before, victim), ctrl)

	p := startProducer(t, c.Addrs(), topic)
	time.Sleep(2 * time.Second)
	start := time.Now()
	if err := c.Broker(victim).Term(); err != nil {
		t.Errorf("controlled shutdown of broker %d: %v", victim, err)
	}
	t.Logf("broker %d exited %v after SIGTERM", victim, time.Since(start).Round(time.Millisecond))

	// The controller moved leadership before the broker went away: the
	// state znodes show it right away, not after a session timeout.
	states := mustStates(t, conn, topic, partitions)
	for p, s := range states {
		if s.Leader == victim || s.Leader < 0 {
			t.Errorf("partition %d right after the shutdown: %+v", p, s)
		}
	}
	waitUntil(t, 15*time.Second, "Metadata agrees with the state znodes", func() error {
		return checkMetadataMatchesState(c, conn, topic, partitions)
	})
	time.Sleep(3 * time.Second)
	acked, errs := p.stop(t)
	if acked == 0 {
		t.Fatal("the producer got no acknowledgement at all")
	}
	nonRetriable := 0
	for text, e := range errs {
		t.Logf("producer error (%d times, retriable %v): %s", e.n, e.retriable, text)
		if !e.retriable {
			nonRetriable += e.n
		}
	}
	if nonRetriable > 0 {
		t.Errorf("%d non-retriable producer errors across the controlled shutdown", nonRetriable)
	}
	p.mu.Lock()
	maxGap, gapPartition := p.maxGap, p.gapPartition
	p.mu.Unlock()
	t.Logf("producer: %d records acknowledged; longest time a partition went without an acknowledgement %v (partition %d)",
		acked, maxGap.Round(time.Millisecond), gapPartition)
	// Leadership moved before the broker left, and it kept answering for
	// a moment after (server/cluster_shutdown.go, shutdownDrain), so the
	// producer followed the new leaders without waiting for a metadata
	// refresh (issue 13: writes are not refused across a SIGTERM). The
	// bound leaves room for a loaded machine; an idle one shows tens of
	// milliseconds.
	if maxGap >= 2*time.Second {
		t.Errorf("partition %d got no acknowledgement for %v across a controlled shutdown", gapPartition, maxGap.Round(time.Millisecond))
	}
	consumeAll(t, c.Addrs(), topic, int(acked), 60*time.Second)
}

// A broker told to stop while the controller is paused: its
// ControlledShutdown waits on the paused controller until the other brokers
// elect another (about 2-3 s of probes), and is then sent again at once to
// the new one, so the broker stops within seconds with its leadership
// moved. Before, the request waited out its whole timeout on the paused
// controller (about 20 s in a chaos run), and the harness held every other
// fault for as long.
func TestControlledShutdownWhileControllerPaused(t *testing.T) {
	const topic, partitions = "shutdown-paused-ctrl", 6
	s := startShutdownScene(t, topic, partitions)
	c, conn, ctrl, before, victim := s.c, s.conn, s.ctrl, s.before, s.victim
	if err := c.Broker(ctrl).Pause(); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			_ = c.Broker(ctrl).Resume()
		}
	}()
	t.Logf("controller %d paused; SIGTERM to broker %d, leader of %v", ctrl, victim, partitionsLedBy(before, victim))
	start := time.Now()
	if err := c.Broker(victim).Term(); err != nil {
		t.Errorf("controlled shutdown of broker %d: %v", victim, err)
	}
	took := time.Since(start)
	t.Logf("broker %d exited %v after SIGTERM", victim, took.Round(time.Millisecond))
	// Probes depose the paused controller in about 3 s; the bound leaves
	// room for a loaded machine and stays well short of the request
	// timeout the shutdown used to wait out.
	if took > 12*time.Second {
		t.Errorf("broker %d took %v to stop with the controller paused", victim, took.Round(time.Millisecond))
	}
	states := mustStates(t, conn, topic, partitions)
	for p, s := range states {
		if s.Leader == victim || s.Leader < 0 {
			t.Errorf("partition %d right after the shutdown: %+v", p, s)
		}
	}
	if err := c.Broker(ctrl).Resume(); err != nil {
		t.Fatal(err)
	}
	paused = false
}
