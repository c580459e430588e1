package controller

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/wirefix"
)

// kgoBrokerChannel sends controller requests with one franz-go client per
// broker, seeded with the broker's inter-broker endpoint and pinned to it
// (the seed broker), so a request never goes anywhere else. kgo negotiates
// each request's version down to what the broker advertises, from the
// request's own version at most.
//
// Locks: mu guards clients; it is not held while sending.
type kgoBrokerChannel struct {
	clientID string
	// opts secure the connections (TLS, SASL) as the inter-broker
	// listener requires.
	opts    []kgo.Opt
	mu      sync.Mutex
	clients map[int32]*brokerClient
}

type brokerClient struct {
	addr string
	cl   *kgo.Client
}

func newKgoBrokerChannel(controllerID int32, opts []kgo.Opt) *kgoBrokerChannel {
	return &kgoBrokerChannel{
		opts:     opts,
		clientID: fmt.Sprintf("broker-%d-controller", controllerID),
		clients:  map[int32]*brokerClient{},
	}
}

func (k *kgoBrokerChannel) AddBroker(id int32, addr string) {
	k.mu.Lock()
	old := k.clients[id]
	if old != nil && old.addr == addr {
		k.mu.Unlock()
		return
	}
	delete(k.clients, id)
	k.mu.Unlock()
	if old != nil {
		old.cl.Close()
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(k.clientID)}, k.opts...)...)
	if err != nil {
		// Only a malformed address fails here; Send reports it.
		return
	}
	k.mu.Lock()
	k.clients[id] = &brokerClient{addr: addr, cl: cl}
	k.mu.Unlock()
}

func (k *kgoBrokerChannel) RemoveBroker(id int32) {
	k.mu.Lock()
	c := k.clients[id]
	delete(k.clients, id)
	k.mu.Unlock()
	if c != nil {
		c.cl.Close()
	}
}

func (k *kgoBrokerChannel) Send(ctx context.Context, id int32, req kmsg.Request) (kmsg.Response, error) {
	k.mu.Lock()
	c := k.clients[id]
	k.mu.Unlock()
	if c == nil {
		return nil, fmt.Errorf("no endpoint known for broker %d", id)
	}
	seeds := c.cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("broker %d: no seed broker", id)
	}
	// The request's version is the IBP's (ctl_request_versions.go), a cap
	// on what franz-go negotiates.
	return seeds[0].Request(ctx, wirefix.Capped{Request: wirefix.Outgoing(req), Max: req.GetVersion()})
}

func (k *kgoBrokerChannel) close() {
	k.mu.Lock()
	cs := k.clients
	k.clients = map[int32]*brokerClient{}
	k.mu.Unlock()
	for _, c := range cs {
		c.cl.Close()
	}
}

// OpenBrokerChannel is the channel a broker's controller sends through:
// ch, or when ch is nil a franz-go client per broker on its inter-broker
// endpoint; with self set, requests to brokerID stay in-process. closeFn
// releases the clients it opened.
func OpenBrokerChannel(brokerID int32, ch BrokerChannel, self func(ctx context.Context, req kmsg.Request) (kmsg.Response, error), opts ...kgo.Opt) (out BrokerChannel, closeFn func()) {
	closeFn = func() {}
	if ch == nil {
		kch := newKgoBrokerChannel(brokerID, opts)
		ch, closeFn = kch, kch.close
	}
	if self != nil {
		ch = selfRouting{self: brokerID, local: self, rest: ch}
	}
	return ch, closeFn
}
