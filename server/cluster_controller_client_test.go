package server

import (
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/controller"
	"github.com/kbroker/kbroker/replica"
)

// A request to a controller that stops answering ends as soon as another
// broker is named controller, not when its timeout runs out: a leader's
// ISR change, and the acks=all writes waiting for it, go to the new
// controller on the leader's next check.
func TestControllerRequestEndsWhenControllerChanges(t *testing.T) {
	silent := silentListener(t)
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

// silentListener accepts connections and reads them, never answering: a
// paused controller.
func silentListener(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = c.Read(make([]byte, 1<<16)) }()
		}
	}()
	return l
}

// epochControl is a controller side that knows only this broker's epoch.
type epochControl struct{ fakeControl }

func (*epochControl) BrokerEpoch() int64 { return 7 }

// shrinkWritingControl records the ISR shrinks a leader writes to
// ZooKeeper itself.
type shrinkWritingControl struct {
	epochControl
	mu      sync.Mutex
	written []replica.IsrChange
}

func (c *shrinkWritingControl) ShrinkIsrPastController(_ string, _ int32, _ int32, ch replica.IsrChange) (int32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.written = append(c.written, ch)
	return ch.PartitionEpoch + 1, nil
}

func (c *shrinkWritingControl) writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.written)
}

// A leader's ISR shrink that the controller does not answer is written by
// the leader itself: at once when the controller's port refuses it, after
// controllerShrinkWait when the controller takes the request and says
// nothing (paused, cut off). A shrink by a leader that does not hear its
// remaining followers (it may be the one cut off) and an expansion are
// never written past the controller.
func TestIsrShrinkWrittenPastSilentController(t *testing.T) {
	silent := silentListener(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	port := func(addr string) int32 {
		_, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		return int32(n)
	}

	control := &shrinkWritingControl{}
	b := clusterBroker(control, nil)
	b.cfg = &config.Config{BrokerID: 1, InterBrokerListenerName: "PLAINTEXT"}
	b.logger = slog.New(slog.DiscardHandler)
	ep := func(port int32) map[string]brokerEndpoint {
		return map[string]brokerEndpoint{"PLAINTEXT": {Host: "127.0.0.1", Port: port}}
	}
	c := b.cluster
	setController := func(addr string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.brokers = map[int32]liveBroker{1: {ID: 1, Endpoints: ep(1)}, 2: {ID: 2, Endpoints: ep(port(addr))}}
		c.controllerID = 2
	}
	w := &controllerClient{b: b}
	defer w.reset()
	shrink := replica.IsrChange{Kind: replica.IsrShrink, Isr: []int32{1, 3}, Changed: []int32{2}, LeaderEpoch: 4, PartitionEpoch: 9, FollowersFetching: true}

	setController(closedAddr)
	if v, err := w.WriteIsr("orders", 0, 1, shrink); err != nil || v != 10 || control.writes() != 1 {
		t.Fatalf("shrink with the controller's port closed: version %d, %v, %d direct writes", v, err, control.writes())
	}
	unheard := shrink
	unheard.FollowersFetching = false
	if _, err := w.WriteIsr("orders", 0, 1, unheard); !errors.Is(err, replica.ErrIsrWriteUnsent) || control.writes() != 1 {
		t.Fatalf("shrink by a leader that does not hear its followers, with the controller's port closed: %v, %d direct writes", err, control.writes())
	}
	expand := replica.IsrChange{Kind: replica.IsrExpand, Isr: []int32{1, 3, 2}, Changed: []int32{2}, LeaderEpoch: 4, PartitionEpoch: 10}
	if _, err := w.WriteIsr("orders", 0, 1, expand); !errors.Is(err, replica.ErrIsrWriteUnsent) || control.writes() != 1 {
		t.Fatalf("expansion with the controller's port closed: %v, %d direct writes", err, control.writes())
	}

	w.reset()
	setController(silent.Addr().String())
	start := time.Now()
	v, err := w.WriteIsr("orders", 0, 1, shrink)
	took := time.Since(start)
	if err != nil || v != 10 || control.writes() != 2 {
		t.Fatalf("shrink with a silent controller: version %d, %v, %d direct writes", v, err, control.writes())
	}
	if took < controllerShrinkWait || took > controllerShrinkWait+time.Second {
		t.Errorf("written past the silent controller after %v, want about %v", took, controllerShrinkWait)
	}
}
