package cluster

import (
	"context"
	"fmt"
	"maps"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// chaosWriters tell whether the cluster took writes, apart from whether the
// workload's producer was acknowledged. An idempotent producer with a
// request in flight to a broker that stopped answering (paused, or cut off
// from the client) waits for that request, up to its request timeout,
// before it may send the partition's records anywhere else, so its silence
// also counts time in which a new leader was taking writes. Each writer
// writes one record at a time to one partition, as a new client would: it
// asks every broker for the partition's leader (Metadata) and takes the
// newest answer (leaderOf), sends that leader one acks=all Produce that
// the leader may hold 1.5 s, gives up after 2 s and never sends a record
// twice (so the run's duplicate check holds for writers' records too),
// then writes the next record 200 ms later. Each partition has
// writersPerPartition of them.
type chaosWriters struct {
	topic  string
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu    sync.Mutex
	acked map[string]chaosAck
	// ackedSeconds holds, per partition, the Unix seconds in which a
	// writer's record of it was acknowledged.
	ackedSeconds map[int32]map[int64]bool
}

func startChaosWriters(t *testing.T, seeds []string, topic string, partitions int32) *chaosWriters {
	t.Helper()
	w := &chaosWriters{topic: topic, acked: map[string]chaosAck{}, ackedSeconds: map[int32]map[int64]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	for part := range partitions {
		for i := range writersPerPartition {
			w.done.Add(1)
			go w.run(ctx, seeds, part, i)
		}
	}
	return w
}

// writersPerPartition: one writer manages about four writes a second, so a
// second in which one slow write (a lost packet on a lossy link) was all it
// sent would count as refused; writers started apart smooth that out.
const writersPerPartition = 3

// run is writer i of partition part.
func (w *chaosWriters) run(ctx context.Context, seeds []string, part int32, i int) {
	defer w.done.Done()
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(i) * writerPause / writersPerPartition):
	}
	conns := brokerConns{}
	defer conns.close()
	for seq := 0; ctx.Err() == nil; seq++ {
		value := fmt.Sprintf("w%d.%d-%08d", part, i, seq)
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		offset, err := w.write(actx, seeds, conns, part, value)
		acancel()
		if err == nil {
			now := time.Now()
			w.mu.Lock()
			w.acked[value] = chaosAck{part, offset}
			if w.ackedSeconds[part] == nil {
				w.ackedSeconds[part] = map[int64]bool{}
			}
			w.ackedSeconds[part][now.Unix()] = true
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(writerPause):
		}
	}
}

// writerPause is how long a writer waits between two writes.
const writerPause = 200 * time.Millisecond

// brokerConns keeps a client per broker address; one whose request failed
// is closed, so that the next request does not queue behind one to a
// broker that stopped answering.
type brokerConns map[string]*kgo.Client

func (c brokerConns) get(addr string) (*kgo.Client, error) {
	if cl := c[addr]; cl != nil {
		return cl, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(time.Second))
	if err != nil {
		return nil, err
	}
	c[addr] = cl
	return cl, nil
}

func (c brokerConns) request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := c.get(addr)
	if err != nil {
		return nil, err
	}
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		c.drop(addr)
	}
	return resp, err
}

func (c brokerConns) close() {
	for _, cl := range c {
		cl.Close()
	}
}

// leaderOf asks every seed broker at once for the partition's leader and
// returns the address of the one named with the highest leader epoch among
// the answers in by metadataGrace after the first (KIP-320: a client
// ignores metadata older than what it has seen). A broker that does not
// answer, or still names a deposed leader, then costs the write nothing.
func (w *chaosWriters) leaderOf(ctx context.Context, seeds []string, conns brokerConns, part int32) (string, error) {
	type answer struct {
		addr  string
		epoch int32
		err   error
	}
	answers := make(chan answer, len(seeds))
	// Only this goroutine touches conns; the requests get their clients
	// from it first (a kgo client is safe for concurrent use).
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, seed := range seeds {
		cl, err := conns.get(seed)
		if err != nil {
			answers <- answer{err: err}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mreq := kmsg.NewPtrMetadataRequest()
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(w.topic)
			mreq.Topics = []kmsg.MetadataRequestTopic{mt}
			resp, err := cl.SeedBrokers()[0].Request(mctx, mreq)
			if err != nil {
				answers <- answer{addr: seed, err: err}
				return
			}
			a := answer{epoch: -1, err: fmt.Errorf("no leader for partition %d", part)}
			mresp := resp.(*kmsg.MetadataResponse)
			for _, t := range mresp.Topics {
				for _, p := range t.Partitions {
					for _, b := range mresp.Brokers {
						if p.Partition == part && b.NodeID == p.Leader {
							a = answer{addr: net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), epoch: p.LeaderEpoch}
						}
					}
				}
			}
			answers <- a
		}()
	}
	best := answer{epoch: -1, err: fmt.Errorf("no broker named a leader for partition %d", part)}
	var failed []string
	var grace <-chan time.Time
collect:
	for range seeds {
		select {
		case a := <-answers:
			switch {
			case a.err != nil && a.addr != "":
				failed = append(failed, a.addr)
			case a.err == nil && (best.err != nil || a.epoch > best.epoch):
				best = a
			}
			if best.err == nil && grace == nil {
				grace = time.After(metadataGrace)
			}
		case <-grace:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	cancel()
	wg.Wait()
	for _, addr := range failed {
		// The next write dials it afresh.
		conns.drop(addr)
	}
	return best.addr, best.err
}

// metadataGrace is how long a writer waits for more brokers' answers once
// one has named a leader.
const metadataGrace = 100 * time.Millisecond

func (c brokerConns) drop(addr string) {
	if cl := c[addr]; cl != nil {
		cl.Close()
		delete(c, addr)
	}
}

// write sends one record to the partition's leader and returns its offset.
func (w *chaosWriters) write(ctx context.Context, seeds []string, conns brokerConns, part int32, value string) (int64, error) {
	addr, err := w.leaderOf(ctx, seeds, conns, part)
	if err != nil {
		return 0, err
	}
	req := produceRequest(w.topic, part, encodeBatchNow(-1, -1, -1, sameRecord{value: value}))
	req.Acks, req.TimeoutMillis = -1, 1500
	resp, err := conns.request(ctx, addr, req)
	if err != nil {
		return 0, err
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("produce response with %d topics", len(pr.Topics))
	}
	rp := pr.Topics[0].Partitions[0]
	if rp.ErrorCode != 0 {
		return 0, fmt.Errorf("produce: error code %d", rp.ErrorCode)
	}
	return rp.BaseOffset, nil
}

// stop ends the writers and returns the records they had acknowledged.
func (w *chaosWriters) stop() map[string]chaosAck {
	w.cancel()
	w.done.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.acked)
}

// seconds is the per-partition acknowledged seconds, for availability.
func (w *chaosWriters) seconds() map[int32]map[int64]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return cloneSeconds(w.ackedSeconds)
}
