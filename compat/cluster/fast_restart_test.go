package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 13 acceptance: a broker SIGKILLed and restarted one second later is
// serving and back in the ISR within 15 seconds, ten times in a row. The
// session timeout is Kafka's default, 18 s, so none of this can come from
// the old session expiring: the restarted broker closes the session its
// previous run left open (zkbroker/session_file.go), and the controller
// sees a bounce (a new broker epoch) and sends it LeaderAndIsr again.
func TestFastRestartAfterKill(t *testing.T) {
	const (
		topic      = "fast-restart"
		partitions = 3
		cycles     = 10
		budget     = 15 * time.Second
	)
	c := harness.StartCluster(t, 3, "zookeeper.session.timeout.ms=18000")
	conn := c.ZK.Connect(t)
	createTopic(t, c, topic, partitions, 3, minISR2)
	waitFullISR(t, conn, topic, partitions, 3)

	p := startChaosProducer(t, c.Addrs(), "fr", partitions, chaosAcksAllOpts(topic)...)
	time.Sleep(2 * time.Second)
	var worst time.Duration
	for cycle := 1; cycle <= cycles; cycle++ {
		// Every broker in turn: leaders, followers and the controller.
		victim := int32((cycle-1)%3 + 1)
		ctrl, _ := controllerID(conn)
		before := mustStates(t, conn, topic, partitions)
		_, reg, err := conn.Get(fmt.Sprintf("/brokers/ids/%d", victim))
		if err != nil {
			t.Fatalf("cycle %d: /brokers/ids/%d: %v", cycle, victim, err)
		}
		b := c.Broker(victim)
		b.Kill()
		time.Sleep(time.Second)
		start := time.Now()
		b.Restart(t)
		serving := time.Since(start)
		waitUntil(t, budget, fmt.Sprintf("cycle %d: broker %d registered again and in every ISR", cycle, victim), func() error {
			ok, st, err := conn.Exists(fmt.Sprintf("/brokers/ids/%d", victim))
			if err != nil {
				return err
			}
			if !ok || st.Czxid == reg.Czxid {
				return fmt.Errorf("/brokers/ids/%d not re-created (czxid %d, before %d)", victim, st.Czxid, reg.Czxid)
			}
			states, err := readStates(conn, topic, partitions)
			if err != nil {
				return err
			}
			for part, s := range states {
				if !slices.Contains(s.ISR, victim) {
					return fmt.Errorf("partition %d: %+v", part, s)
				}
			}
			return nil
		})
		took := time.Since(start)
		worst = max(worst, took)
		t.Logf("cycle %d: broker %d (controller was %d, led %v) answered %v after its restart, back in every ISR after %v",
			cycle, victim, ctrl, partitionsLedBy(before, victim), serving.Round(time.Millisecond), took.Round(time.Millisecond))
		if took > budget {
			t.Errorf("cycle %d: broker %d took %v to rejoin, budget %v", cycle, victim, took, budget)
		}
	}
	t.Logf("slowest rejoin %v", worst.Round(time.Millisecond))
	acked := p.stop(t)
	c.WaitReady(t)
	finishChaos(t, c, conn, topic, partitions, acked)
}
