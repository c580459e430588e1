package server

// Fetch, versions 4-17 (v17, what Kafka 3.9 followers send, adds only a
// KRaft directory id, unused here).
//
// Consumers read below the high watermark; read_committed ones
// (isolation_level 1) below the last stable offset, and get the aborted
// transactions overlapping what they read (null for read_uncommitted, an
// empty list when there are none, as Kafka answers); every fetch carries
// the real last stable offset (docs/transactions-log.md). A read_committed
// long-poll waits for the LSO to move. Sessions follow KIP-227
// (fetch_session.go). A fetch that finds fewer than min_bytes waits up to
// max_wait_ms in the broker's purgatory (delayed_ops.go), answered through
// Response.Wait, checked at every append, high-watermark move and
// leadership change of its partitions. Large answers are written zero-copy
// (fetch_frame.go).
//
// A follower's fetch (replica id >= 0) reads to the log end and updates the
// leader's view of that follower (replica.Partition.ReadForFollower).
// Follower fetching (KIP-392, docs/follower-fetching.md): a consumer's
// fetch from v11 may be served by a follower, to its own high watermark;
// with replica.selector.class RackAwareReplicaSelector the leader answers
// a consumer whose rack_id holds an in-sync follower, and not the leader,
// with that follower as preferred_read_replica and no records
// (fetch_follower.go).
// Authorization as Kafka's (authorizeFetch).
// Replication quotas (KIP-73) hold back throttled partitions of followers
// out of the ISR (fetch_throttle.go).
// Client quotas as Kafka's (fetch_quota.go); followers are not throttled.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/replica"
)

func init() { register(kmsg.Fetch.Int16(), 4, 17, handleFetch) }

// copyThreshold: answers with less record data than this are copied into
// memory and sent as a plain message; the zero-copy frame pays off above.
const copyThreshold = 16 << 10

func handleFetch(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.FetchRequest)
	now := time.Now()
	plan, err := b.data.planFetch(r, req.Version, now)
	if err != nil {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(req.Version)
		resp.ErrorCode = errCode(err)
		return protocol.Response{Msg: resp}
	}
	b.authorizeFetch(req, plan)
	b.applyFetchQuotas(req, plan, now)
	if plan.replicaID >= 0 {
		plan.leaderQuota = b.leaderQuota
	}
	listener := ""
	if req.Conn != nil {
		listener = req.Conn.Listener
		plan.hints = func(resp *kmsg.FetchResponse) { b.addFetchLeaderHints(resp, listener) }
	}
	if plan.anyReplica && r.Rack != "" && b.replicaSelector == replica.SelectRackAware {
		plan.choose = b.readReplicaChooser(r.Rack, listener)
	}
	n := plan.read(true)
	// As Kafka's fetchMessages: answered at once unless there is a wait to
	// make and nothing that ends it already (enough data, an error, a
	// diverging epoch the follower must truncate to, a preferred read
	// replica the consumer is to move to).
	if r.MaxWaitMillis <= 0 || n >= plan.minBytes || len(plan.parts) == 0 || plan.anyError() || plan.anyDiverging() || plan.anyPreferred() {
		return plan.answer()
	}
	if plan.quota != nil {
		plan.quota.waiting()
	}
	return plan.wait(b.delayed, time.Duration(r.MaxWaitMillis)*time.Millisecond)
}

// planFetch resolves the request's partitions, through the session for an
// incremental fetch.
func (d *dataPath) planFetch(r *kmsg.FetchRequest, version int16, now time.Time) (*fetchPlan, error) {
	plan := &fetchPlan{
		version:  version,
		maxBytes: int(r.MaxBytes),
		minBytes: int(r.MinBytes),
		full:     true,
		stats:    &d.b.topicStats,
	}
	if plan.maxBytes <= 0 {
		plan.maxBytes = 0
	}
	plan.replicaID = r.ReplicaID
	if version >= 15 {
		plan.replicaID = r.ReplicaState.ID
	}
	if r.IsolationLevel == 1 {
		plan.isolation = replica.FetchTxnCommitted
	}
	// From v11 a consumer may read a follower (KIP-392), whatever
	// replica.selector.class says: Kafka's FetchParams.fetchOnlyLeader.
	plan.anyReplica = version >= 11 && plan.replicaID < 0
	usesIDs := version >= 13
	reqParts := d.requestPartitions(r, version)
	if version < 7 || r.SessionEpoch == initialEpoch || r.SessionEpoch == finalEpoch {
		if version >= 7 && r.SessionID != 0 {
			// A full fetch naming a session closes it (KIP-227).
			d.sessions.remove(r.SessionID)
		}
		if version >= 7 && r.SessionEpoch == initialEpoch {
			plan.session = d.sessions.create(reqParts, usesIDs, now)
		}
		plan.parts = d.resolve(reqParts, usesIDs, plan.anyReplica)
		return plan, nil
	}
	s, err := d.sessions.get(r.SessionID, r.SessionEpoch, usesIDs, now)
	if err != nil {
		return nil, err
	}
	var forgotten []sessionKey
	for _, ft := range r.ForgottenTopics {
		for _, p := range ft.Partitions {
			forgotten = append(forgotten, fetchKey(usesIDs, ft.Topic, ft.TopicID, p))
		}
	}
	s.mu.Lock()
	s.update(reqParts, forgotten)
	plan.parts = d.resolve(s.parts, usesIDs, plan.anyReplica)
	s.mu.Unlock()
	plan.session, plan.full = s, false
	return plan, nil
}

// authorizeFetch fails the partitions the principal may not read, as
// Kafka's handleFetchRequest: a follower's fetch needs CLUSTER_ACTION on
// the cluster, a consumer's READ on each topic; either way the partition
// answers TOPIC_AUTHORIZATION_FAILED without data.
func (b *Broker) authorizeFetch(req *protocol.Request, plan *fetchPlan) {
	if b.authorizer == nil {
		return
	}
	follower := plan.replicaID >= 0
	if follower {
		if !b.authorizeCluster(req, kmsg.ACLOperationClusterAction) {
			// Every partition, an unknown topic id's too.
			for _, fp := range plan.parts {
				fp.p, fp.err = nil, kerr.TopicAuthorizationFailed
			}
		}
		return
	}
	allowed := map[string]bool{}
	for _, fp := range plan.parts {
		name := fp.sp.key.topic
		if name == "" {
			t := b.topicByID(fp.sp.key.topicID)
			if t == nil {
				continue // UNKNOWN_TOPIC_ID already
			}
			name = t.Name
		}
		ok, seen := allowed[name]
		if !seen {
			ok = b.authorize(req, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, name)
			allowed[name] = ok
		}
		if !ok {
			fp.p, fp.err = nil, kerr.TopicAuthorizationFailed
		}
	}
}

// fetchKey names a partition of a fetch: by topic id from v13, by name
// before.
func fetchKey(usesIDs bool, topic string, topicID [16]byte, partition int32) sessionKey {
	if usesIDs {
		return sessionKey{topicID: topicID, partition: partition}
	}
	return sessionKey{topic: topic, partition: partition}
}

// requestPartitions turns the request's topics into session partitions.
func (d *dataPath) requestPartitions(r *kmsg.FetchRequest, version int16) []*sessionPartition {
	var out []*sessionPartition
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			sp := &sessionPartition{
				key: fetchKey(version >= 13, rt.Topic, rt.TopicID, rp.Partition),
				fetchPosition: fetchPosition{
					fetchOffset:        rp.FetchOffset,
					partitionMaxBytes:  rp.PartitionMaxBytes,
					currentLeaderEpoch: rp.CurrentLeaderEpoch,

					followerLogStartOffset: rp.LogStartOffset,
					lastFetchedEpoch:       -1,
				},
				highWatermark: -2, // never sent yet
			}
			if version >= 12 {
				sp.lastFetchedEpoch = rp.LastFetchedEpoch
			}
			out = append(out, sp)
		}
	}
	return out
}

// resolve finds each partition's replica.Partition and snapshots its
// fetch position. With topic ids (v13+) an unknown id is UNKNOWN_TOPIC_ID.
// anyReplica lets a follower serve (a v11+ consumer's fetch). For a
// session the caller holds its lock.
func (d *dataPath) resolve(parts []*sessionPartition, usesIDs, anyReplica bool) []*fetchPart {
	find := d.b.leaderPartition
	if anyReplica {
		find = d.b.servingPartition
	}
	out := make([]*fetchPart, len(parts))
	for i, sp := range parts {
		fp := &fetchPart{sp: sp, fetchPosition: sp.fetchPosition, preferred: -1}
		var t *Topic
		if usesIDs {
			if t = d.b.topicByID(sp.key.topicID); t == nil {
				fp.err = kerr.UnknownTopicID
			} else {
				fp.p, fp.err = find(t, sp.key.partition)
			}
		} else {
			t = d.b.topic(sp.key.topic)
			fp.p, fp.err = find(t, sp.key.partition)
		}
		if t != nil {
			fp.stats = t.stats
		}
		out[i] = fp
	}
	return out
}

// wait puts the fetch in the purgatory until min_bytes are readable, a
// partition is gone (leadership moved, epoch fenced) or max_wait passed,
// then reads again and answers. The re-read does not count as another
// fetch of a follower (read's updateFetchState).
func (f *fetchPlan) wait(delayed *delayedOps, maxWait time.Duration) protocol.Response {
	now := delayed.Now()
	op := newDelayedFetch(f, now.Add(maxWait))
	d := delayed.TryCompleteElseWatch(op, op.keys, now, op.verdict.Deadline)
	select {
	case <-d.Done():
		f.read(false)
		return f.answer()
	default:
	}
	return protocol.Response{Wait: func(ctx context.Context) protocol.Response {
		select {
		case <-d.Done():
		case <-ctx.Done():
			d.ForceComplete()
		}
		f.read(false)
		return f.answer()
	}}
}

// answer encodes the last read: a plain message when small, else a frame
// whose record bytes go straight from the log to the socket.
func (f *fetchPlan) answer() protocol.Response {
	if f.quota != nil {
		if d := f.quota.check(f.responseSize()); d > 0 {
			return f.throttledAnswer(d)
		}
	}
	f.recordThrottledBytes()
	f.countBytesOut()
	resp, holes := f.response()
	// Hints go only with a partition's error (current_leader.go), so a
	// fetch without one skips the walk over the response.
	if f.hints != nil && f.anyError() {
		f.hints(resp)
	}
	total := 0
	for _, h := range holes {
		total += h.Data.Len()
	}
	if total < copyThreshold {
		for _, h := range holes {
			data, err := h.Data.Bytes()
			if err != nil {
				return protocol.Response{Close: true}
			}
			*h.Slot = data
		}
		return protocol.Response{Msg: resp}
	}
	frame, err := buildFrame(holes, resp.IsFlexible(), func() []byte { return resp.AppendTo(nil) })
	if err != nil {
		return protocol.Response{Close: true}
	}
	return protocol.Response{Frame: frame}
}
