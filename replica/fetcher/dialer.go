package fetcher

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/wirefix"
)

// Dialer opens connections to leaders. Each fetcher holds one Conn and
// drops it (Close, then Dial again after a back-off) on any request error.
type Dialer interface {
	// Dial returns a connection to leader; clientID is Kafka's
	// broker-<id>-fetcher-<fetcherId>.
	Dial(ctx context.Context, leader BrokerEndpoint, clientID string) (Conn, error)
}

// Conn sends requests to one leader.
type Conn interface {
	// Request sends req at a version no higher than req.GetVersion() (lower
	// if the leader supports less) and returns the response, whose version
	// is the one used.
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	Close()
}

// KgoDialer is the production Dialer: one franz-go client pinned to the
// leader's address per connection. franz-go negotiates versions with
// ApiVersions; the requested version caps that negotiation.
type KgoDialer struct {
	// Opts are extra client options (TLS, SASL, dial timeouts).
	Opts []kgo.Opt
}

// Dial implements Dialer. franz-go connects lazily, so an unreachable
// leader surfaces as an error from the first Request.
func (d KgoDialer) Dial(_ context.Context, leader BrokerEndpoint, clientID string) (Conn, error) {
	opts := append([]kgo.Opt{kgo.SeedBrokers(leader.Addr), kgo.ClientID(clientID)}, d.Opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("client for leader %d at %s: %w", leader.ID, leader.Addr, err)
	}
	// The seed handle is looked up once: SeedBrokers allocates, and the
	// seeds of this client never change.
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		cl.Close()
		return nil, fmt.Errorf("client for leader %d at %s: no seed broker", leader.ID, leader.Addr)
	}
	return kgoConn{cl: cl, leader: seeds[0]}, nil
}

type kgoConn struct {
	cl     *kgo.Client
	leader *kgo.Broker
}

func (c kgoConn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return c.leader.Request(ctx, wirefix.Capped{Request: req, Max: req.GetVersion()})
}

func (c kgoConn) Close() { c.cl.Close() }
