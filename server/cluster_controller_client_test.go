package server

import (
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/controller"
)

// A request to a controller that stops answering ends as soon as another
// broker is named controller, not when its timeout runs out: a leader's
// ISR change, and the acks=all writes waiting for it, go to the new
// controller on the leader's next check.
func TestControllerRequestEndsWhenControllerChanges(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		// Accepts and reads, never answers: a paused controller.
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = c.Read(make([]byte, 1<<16)) }()
		}
	}()
	host, port, _ := net.SplitHostPort(silent.Addr().String())
	p, _ := strconv.Atoi(port)

	b := clusterBroker(&epochControl{}, nil)
	b.cfg = &config.Config{BrokerID: 1, InterBrokerListenerName: "PLAINTEXT"}
	ep := func(port int32) map[string]brokerEndpoint {
		return map[string]brokerEndpoint{"PLAINTEXT": {Host: host, Port: port}}
	}
	c := b.cluster
	c.mu.Lock()
	c.brokers = map[int32]liveBroker{1: {ID: 1, Endpoints: ep(1)}, 2: {ID: 2, Endpoints: ep(int32(p))}, 3: {ID: 3, Endpoints: ep(3)}}
	c.controllerID = 2
	c.mu.Unlock()
	w := &controllerClient{b: b}
	defer w.reset()

	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := w.send(t.Context(), 1, controller.AlterPartitionItem{Topic: "orders", NewIsr: []int32{1, 3}})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("answered while the controller was silent: %v", err)
	default:
	}
	c.mu.Lock()
	c.controllerID = 3
	c.mu.Unlock()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a silent controller's request succeeded")
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("ended %v after it was sent", took)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("ended by its timeout: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting on the old controller 5 s after another was named")
	}
}

// epochControl is a controller side that knows only this broker's epoch.
type epochControl struct{ fakeControl }

func (*epochControl) BrokerEpoch() int64 { return 7 }
