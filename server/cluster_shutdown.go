package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controlledShutdown asks the controller to move leadership off this
// broker before it stops (controlled.shutdown.enable), as Kafka's
// KafkaServer.controlledShutdown does: up to controlled.shutdown.max.retries
// more attempts, controlled.shutdown.retry.backoff.ms apart, until the
// controller reports no partition left. Failure is logged, not fatal: the
// broker stops anyway and the controller's broker-change handling elects
// new leaders once the session ends. It reports whether leadership moved.
func (b *Broker) controlledShutdown(ctx context.Context) bool {
	if !b.cfg.ControlledShutdownEnable {
		return false
	}
	var err error
	for attempt := int32(0); attempt <= b.cfg.ControlledShutdownMaxRetries; attempt++ {
		// A request the controller's move ended is sent again at once, to
		// the new controller: the back-off is for a controller that
		// answered and could not yet move everything.
		if attempt > 0 && !errors.Is(err, errControllerMoved) {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(b.cfg.ControlledShutdownRetryBackoff):
			}
		}
		var remaining int
		remaining, err = b.requestControlledShutdown(ctx)
		if err == nil && remaining == 0 {
			b.logger.Info("controlled shutdown succeeded")
			return true
		}
		b.logger.Warn("controlled shutdown incomplete; retrying", "attempt", attempt+1, "remaining_partitions", remaining, "err", err)
	}
	b.logger.Warn("controlled shutdown failed; stopping anyway")
	return false
}

// shutdownDrain is how long a broker whose leadership has moved keeps
// serving before it closes its listeners. A client whose next request
// meets a refused connection waits for its next metadata refresh (seconds,
// with some clients' minimum metadata age) before it finds the new
// leaders; one that is still answered gets NOT_LEADER_OR_FOLLOWER with the
// new leader's endpoint (KIP-951) or fresh Metadata, and moves at once.
const shutdownDrain = time.Second

// drainAfterShutdown keeps serving for shutdownDrain once leadership has
// moved, when there are other brokers for clients to move to.
func (b *Broker) drainAfterShutdown(moved bool) {
	if !moved || len(b.cluster.liveBrokers()) < 2 {
		return
	}
	b.logger.Info("serving a little longer so that clients learn the new leaders", "drain", shutdownDrain)
	time.Sleep(shutdownDrain)
}

// requestControlledShutdown sends one ControlledShutdown to the current
// controller over the inter-broker listener.
func (b *Broker) requestControlledShutdown(ctx context.Context) (int, error) {
	if b.controllerIsSelf() {
		remaining, err := b.cluster.control.ControlledShutdown(ctx, b.cfg.BrokerID, b.cluster.control.BrokerEpoch())
		return len(remaining), err
	}
	addr, err := b.awaitControllerAddr(ctx)
	if err != nil {
		return -1, err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RequestRetries(0)}, b.interBrokerOpts...)...)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	req := kmsg.NewPtrControlledShutdownRequest()
	req.Version = 3
	req.BrokerID = b.cfg.BrokerID
	req.BrokerEpoch = b.cluster.control.BrokerEpoch()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ctx, stop := b.whileController(ctx, addr)
	defer stop()
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return -1, fmt.Errorf("no client for controller at %s", addr)
	}
	kresp, err := seeds[0].Request(ctx, req)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errControllerMoved) {
			return -1, cause
		}
		return -1, err
	}
	resp := kresp.(*kmsg.ControlledShutdownResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return -1, err
	}
	return len(resp.PartitionsRemaining), nil
}

// controllerElectionWait bounds how long a controlled shutdown waits for a
// controller to be known: a request that the controller's move ended is
// sent again at once, usually while the election is still under way.
const controllerElectionWait = 3 * time.Second

// awaitControllerAddr is controllerAddr, waiting up to
// controllerElectionWait for a controller to be known.
func (b *Broker) awaitControllerAddr(ctx context.Context) (string, error) {
	deadline := time.Now().Add(controllerElectionWait)
	for {
		addr, err := b.controllerAddr()
		if err == nil || time.Now().After(deadline) {
			return addr, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(controllerCheckInterval):
		}
	}
}

// controllerIsSelf: this broker is the controller (always so in a cluster
// of one). It then asks the controller directly rather than through an
// address that may only be reachable from elsewhere.
func (b *Broker) controllerIsSelf() bool {
	return b.controllerID() == b.cfg.BrokerID && b.cluster.control.IsController()
}

// controllerAddr is the current controller's endpoint on the inter-broker
// listener, host:port.
func (b *Broker) controllerAddr() (string, error) {
	id := b.controllerID()
	for _, lb := range b.cluster.liveBrokers() {
		if lb.ID != id {
			continue
		}
		if ep, ok := lb.Endpoints[b.cfg.InterBrokerListenerName]; ok {
			return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), nil
		}
	}
	return "", fmt.Errorf("controller %d unknown or without a %s endpoint", id, b.cfg.InterBrokerListenerName)
}
