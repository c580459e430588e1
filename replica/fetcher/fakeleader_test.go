package fetcher

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// leaderPartition is one partition of the fake leader.
type leaderPartition struct {
	log         *logstore.FileLog
	id          [16]byte
	leaderEpoch int32
	// hw is the leader's HW; -1 means its LEO.
	hw int64
	// err, when set, answers every fetch of the partition.
	err *kerr.Error
	// budget, when >= 0, is how many fetches are still answered; after
	// that every fetch gets NOT_LEADER_OR_FOLLOWER.
	budget int
}

// fetchSeen is one partition of a Fetch the fake leader received.
type fetchSeen struct {
	conn             int
	version          int16
	replicaID        int32
	tp               replica.TopicPartition
	fetchOffset      int64
	lastFetchedEpoch int32
	currentEpoch     int32
}

// fakeLeader answers Fetch, OffsetForLeaderEpoch and ListOffsets from its
// partitions' logs as a leader does (the epoch check is
// replica.CheckLastFetchedEpoch itself).
type fakeLeader struct {
	mu          sync.Mutex
	parts       map[replica.TopicPartition]*leaderPartition
	unreachable bool
	// block makes requests wait for their context: a hung leader.
	block   bool
	dials   int
	fetches []fetchSeen
	epochQs []kmsg.OffsetForLeaderEpochRequestTopicPartition
	conns   int
}

func newFakeLeader() *fakeLeader {
	return &fakeLeader{parts: map[replica.TopicPartition]*leaderPartition{}}
}

func (l *fakeLeader) addPartition(topic string, index int32, log *logstore.FileLog, leaderEpoch int32) *leaderPartition {
	lp := &leaderPartition{log: log, leaderEpoch: leaderEpoch, hw: -1, budget: -1}
	copy(lp.id[:], topic)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.parts[replica.TopicPartition{Topic: topic, Partition: index}] = lp
	return lp
}

func (l *fakeLeader) set(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

func (l *fakeLeader) fetchesOf(tp replica.TopicPartition) []fetchSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []fetchSeen
	for _, f := range l.fetches {
		if f.tp == tp {
			out = append(out, f)
		}
	}
	return out
}

func (l *fakeLeader) epochQuestions() []kmsg.OffsetForLeaderEpochRequestTopicPartition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]kmsg.OffsetForLeaderEpochRequestTopicPartition(nil), l.epochQs...)
}

// fakeDialer connects to fake leaders by address.
type fakeDialer struct {
	mu      sync.Mutex
	leaders map[string]*fakeLeader
	open    atomic.Int32
}

func (d *fakeDialer) Dial(_ context.Context, leader BrokerEndpoint, clientID string) (Conn, error) {
	d.mu.Lock()
	l := d.leaders[leader.Addr]
	d.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("no leader at %s", leader.Addr)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dials++
	if l.unreachable {
		return nil, errors.New("connection refused")
	}
	l.conns++
	d.open.Add(1)
	return &fakeConn{l: l, id: l.conns, d: d}, nil
}

type fakeConn struct {
	l      *fakeLeader
	id     int
	d      *fakeDialer
	closed atomic.Bool
}

func (c *fakeConn) Close() {
	if !c.closed.Swap(true) {
		c.d.open.Add(-1)
	}
}

func (c *fakeConn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.l.mu.Lock()
	down, block := c.l.unreachable, c.l.block
	c.l.mu.Unlock()
	if down {
		return nil, errors.New("connection reset")
	}
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	// Through the wire format both ways, so that fields a version does
	// not carry (topic names from v13, ReplicaID from v15) are lost here
	// as they would be on a socket.
	wire, err := viaWire(req)
	if err != nil {
		return nil, err
	}
	resp, err := c.l.serve(ctx, c.id, wire)
	if err != nil {
		return nil, err
	}
	back := req.ResponseKind()
	if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("decoding response: %w", err)
	}
	return back, nil
}

func viaWire(req kmsg.Request) (kmsg.Request, error) {
	out := kmsg.RequestForKey(req.Key())
	out.SetVersion(req.GetVersion())
	if err := out.ReadFrom(req.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("decoding request: %w", err)
	}
	return out, nil
}

// serve answers one decoded request.
func (l *fakeLeader) serve(ctx context.Context, conn int, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.FetchRequest:
		return l.fetch(ctx, conn, r), nil
	case *kmsg.OffsetForLeaderEpochRequest:
		return l.offsetForLeaderEpoch(r), nil
	case *kmsg.ListOffsetsRequest:
		return l.listOffsets(r), nil
	}
	return nil, fmt.Errorf("unexpected request key %d", req.Key())
}

func (l *fakeLeader) partitionFor(topic string, id [16]byte, version int16, index int32) (replica.TopicPartition, *leaderPartition) {
	for tp, lp := range l.parts {
		if tp.Partition == index && ((version >= 13 && lp.id == id) || (version < 13 && tp.Topic == topic)) {
			return tp, lp
		}
	}
	return replica.TopicPartition{Topic: topic, Partition: index}, nil
}

func epochError(lp *leaderPartition, current int32) error {
	switch {
	case current < 0:
		return nil
	case current < lp.leaderEpoch:
		return kerr.FencedLeaderEpoch
	case current > lp.leaderEpoch:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

func (l *fakeLeader) fetch(ctx context.Context, conn int, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	l.mu.Lock()
	ready := false
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			tp, lp := l.partitionFor(t.Topic, t.TopicID, req.Version, p.Partition)
			replicaID := req.ReplicaID
			if req.Version >= 15 {
				replicaID = req.ReplicaState.ID
			}
			l.fetches = append(l.fetches, fetchSeen{conn, req.Version, replicaID, tp, p.FetchOffset, p.LastFetchedEpoch, p.CurrentLeaderEpoch})
			rp := l.fetchPartition(lp, p)
			ready = ready || len(rp.RecordBatches) > 0 || rp.ErrorCode != 0 || rp.DivergingEpoch.EndOffset >= 0
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	l.mu.Unlock()
	if !ready {
		// Long poll: nothing to return, so wait MaxWait as a leader does.
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(req.MaxWaitMillis) * time.Millisecond):
		}
	}
	return resp
}

func (l *fakeLeader) fetchPartition(lp *leaderPartition, p kmsg.FetchRequestTopicPartition) kmsg.FetchResponseTopicPartition {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition = p.Partition
	if lp == nil {
		rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return rp
	}
	if lp.budget == 0 {
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		return rp
	}
	if lp.budget > 0 {
		lp.budget--
	}
	if lp.err != nil {
		rp.ErrorCode = lp.err.Code
		return rp
	}
	if err := epochError(lp, p.CurrentLeaderEpoch); err != nil {
		rp.ErrorCode = err.(*kerr.Error).Code
		return rp
	}
	leo, start := lp.log.LogEndOffset(), lp.log.LogStartOffset()
	rp.HighWatermark = leo
	if lp.hw >= 0 {
		rp.HighWatermark = lp.hw
	}
	rp.LastStableOffset, rp.LogStartOffset = rp.HighWatermark, start
	check, end := replica.CheckLastFetchedEpoch(logstore.NewEpochCache(lp.log.LeaderEpochEntries()), start, leo, p.LastFetchedEpoch, p.FetchOffset)
	switch {
	case check == replica.FetchEpochOffsetOutOfRange || p.FetchOffset < start || p.FetchOffset > leo:
		rp.ErrorCode = kerr.OffsetOutOfRange.Code
		return rp
	case check == replica.FetchEpochDiverging:
		rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = end.LeaderEpoch, end.EndOffset
		return rp
	}
	rr, err := lp.log.Read(p.FetchOffset, leo, int(p.PartitionMaxBytes), true)
	if err != nil {
		rp.ErrorCode = kerr.UnknownServerError.Code
		return rp
	}
	rp.RecordBatches, _ = rr.Bytes()
	return rp
}

func (l *fakeLeader) offsetForLeaderEpoch(req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			l.epochQs = append(l.epochQs, p)
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition = p.Partition
			lp := l.parts[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			switch {
			case lp == nil:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case epochError(lp, p.CurrentLeaderEpoch) != nil:
				rp.ErrorCode = epochError(lp, p.CurrentLeaderEpoch).(*kerr.Error).Code
			default:
				rp.LeaderEpoch, rp.EndOffset = lp.log.EndOffsetForEpoch(p.LeaderEpoch)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (l *fakeLeader) listOffsets(req *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			lp := l.parts[replica.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			switch {
			case lp == nil:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case req.ReplicaID < 0:
				// A follower's question is answered from the LEO, a
				// consumer's from the HW; the fake serves followers only.
				rp.ErrorCode = kerr.InvalidRequest.Code
			case p.Timestamp == latestTimestamp:
				rp.Offset = lp.log.LogEndOffset()
			case p.Timestamp == earliestTimestamp:
				rp.Offset = lp.log.LogStartOffset()
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
