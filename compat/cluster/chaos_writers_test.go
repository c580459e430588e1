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
// asks any broker for the partition's leader (Metadata), sends the leader
// one acks=all Produce that the leader may hold 1.5 s, gives up after 2 s
// and never sends a record twice (so the run's duplicate check holds for
// writers' records too), then writes the next record 200 ms later.
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
		meta := newClient(t, seeds, kgo.RequestRetries(1), kgo.DialTimeout(time.Second))
		w.done.Add(1)
		go func() {
			defer w.done.Done()
			leaders := map[string]*kgo.Client{}
			defer func() {
				for _, cl := range leaders {
					cl.Close()
				}
			}()
			for seq := 0; ctx.Err() == nil; seq++ {
				value := fmt.Sprintf("w%d-%08d", part, seq)
				actx, acancel := context.WithTimeout(ctx, 2*time.Second)
				offset, err := w.write(actx, meta, leaders, part, value)
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
				case <-time.After(200 * time.Millisecond):
				}
			}
		}()
	}
	return w
}

// write sends one record to the partition's leader and returns its offset.
// leaders keeps a client per leader address; one whose request failed is
// closed, so that the next write does not queue behind a request to a
// broker that stopped answering.
func (w *chaosWriters) write(ctx context.Context, meta *kgo.Client, leaders map[string]*kgo.Client, part int32, value string) (int64, error) {
	mreq := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(w.topic)
	mreq.Topics = []kmsg.MetadataRequestTopic{mt}
	mresp, err := mreq.RequestWith(ctx, meta)
	if err != nil {
		return 0, err
	}
	addr := ""
	for _, t := range mresp.Topics {
		for _, p := range t.Partitions {
			if p.Partition != part {
				continue
			}
			for _, b := range mresp.Brokers {
				if b.NodeID == p.Leader {
					addr = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
				}
			}
		}
	}
	if addr == "" {
		return 0, fmt.Errorf("no leader for partition %d", part)
	}
	cl := leaders[addr]
	if cl == nil {
		if cl, err = kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(time.Second)); err != nil {
			return 0, err
		}
		leaders[addr] = cl
	}
	req := produceRequest(w.topic, part, encodeBatch(-1, -1, -1, sameRecord{value: value}))
	req.Acks, req.TimeoutMillis = -1, 1500
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		cl.Close()
		delete(leaders, addr)
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
