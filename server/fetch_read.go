package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/replica/throttle"
)

// fetchPart is one partition of a fetch as the data path sees it: from the
// request (full fetch) or from the session (incremental fetch).
type fetchPart struct {
	// sp is the session's entry (or the request's, sessionless); it is
	// read and written only under the session's lock, in response.
	sp  *sessionPartition
	p   *replica.Partition // nil when err is set
	err error              // unknown topic, topic id or partition
	// stats are the topic's BrokerTopicMetrics (nil: unknown topic).
	stats *topicStats

	// The request's position, copied from sp when the fetch was planned,
	// so reads need no lock.
	fetchPosition
	diverging *replica.DivergingEpoch
	// preferred is the replica the leader sends the consumer to
	// (preferred_read_replica, KIP-392), -1 for none; with one set the
	// partition is answered without records.
	preferred int32

	// throttled: a follower's partition held back by the leader's
	// replication quota on this fetch (fetch_throttle.go).
	throttled bool

	// Outcome of the last read.
	data    logstore.ReadResult
	info    replica.ReadInfo
	readErr error
}

// fetchPlan is everything needed to read and answer a fetch; it survives
// into the long-poll wait.
type fetchPlan struct {
	// hints adds KIP-951 leader hints to the response (nil: none).
	hints func(*kmsg.FetchResponse)
	// replicaID is the fetching follower's broker id, -1 for consumers.
	replicaID int32
	// isolation is a consumer's isolation_level: read to the HW, or to
	// the last stable offset (readTo).
	isolation replica.FetchIsolation
	// anyReplica: a consumer on Fetch v11+, which a follower serves too
	// (Kafka's FetchParams.fetchOnlyLeader false, KIP-392).
	anyReplica bool
	// choose, when set, picks the preferred read replica of a partition
	// this broker leads for the fetch offset; nil without a rack-aware
	// replica.selector.class or a client rack, so that those fetches pay
	// nothing for it.
	choose   func(p *replica.Partition, fetchOffset int64) int32
	version  int16
	maxBytes int
	minBytes int
	parts    []*fetchPart
	session  *fetchSession // nil for sessionless and uncached full fetches
	full     bool
	// leaderQuota is the leader's replication quota, for a follower's
	// fetch; nil for consumers.
	leaderQuota *throttle.Quota
	// stats counts the fetch in BrokerTopicMetrics (nil: not counted).
	stats *brokerTopicStats
	// quota is a consumer's client quota check (fetch_quota.go), nil when
	// none applies.
	quota *fetchQuota
}

// read reads every partition, honouring response and partition limits:
// the first partition that has data gets at least one whole batch even
// when it exceeds the limits (KIP-74), later ones only what fits. It
// returns the number of record bytes read. updateFetchState is set for the
// read made when the fetch arrived and clear for the re-read of a fetch
// that waited: only the first updates the leader's view of a fetching
// follower, and the re-read finds a partition no longer led here gone.
func (f *fetchPlan) read(updateFetchState bool) int {
	remaining := f.maxBytes
	total := 0
	minOne := true
	for _, fp := range f.parts {
		fp.data, fp.readErr, fp.diverging, fp.preferred = nil, nil, nil, -1
		if fp.err != nil {
			continue
		}
		if err := fp.p.CheckLeaderEpoch(fp.currentLeaderEpoch); err != nil {
			fp.readErr = err
			continue
		}
		if !updateFetchState && !f.stillServed(fp.p) {
			fp.readErr = kerr.NotLeaderForPartition
			continue
		}
		if updateFetchState {
			fp.throttled = f.leaderThrottles(fp)
		}
		if f.choose != nil {
			// As Kafka's readFromLog: a preferred replica other than this
			// leader answers at once, with the offsets and no records.
			if fp.preferred = f.choose(fp.p, fp.fetchOffset); fp.preferred >= 0 {
				fp.info = fp.p.Offsets(replica.FetchHighWatermark)
				continue
			}
		}
		limit := min(int(fp.partitionMaxBytes), remaining)
		if fp.throttled {
			// Nothing read, but the follower's position still counts.
			_, info, diverging, err := fp.p.ReadForFollower(f.replicaID, fp.fetchOffset, fp.followerLogStartOffset, fp.lastFetchedEpoch, 0, false, updateFetchState)
			fp.info, fp.diverging, fp.readErr = info, diverging, err
			continue
		}
		if limit <= 0 && !minOne {
			fp.info = fp.p.Offsets(f.isolation)
			continue
		}
		var (
			rr   logstore.ReadResult
			info replica.ReadInfo
			err  error
		)
		if f.replicaID >= 0 {
			rr, info, fp.diverging, err = fp.p.ReadForFollower(f.replicaID, fp.fetchOffset, fp.followerLogStartOffset, fp.lastFetchedEpoch, max(limit, 0), minOne, updateFetchState)
		} else {
			rr, info, err = fp.p.ReadIsolated(fp.fetchOffset, max(limit, 0), minOne, f.isolation)
		}
		fp.info = info
		if err != nil {
			fp.readErr = err
			continue
		}
		if fp.diverging != nil {
			// No records: the follower truncates first (KIP-320).
			continue
		}
		n := rr.Len()
		if n > 0 {
			fp.data = rr
			minOne = false
			total += n
			remaining -= n
		}
	}
	if updateFetchState && f.stats != nil {
		f.countFetched()
	}
	return total
}

// stillServed reports whether the re-read of a fetch that waited may read
// p: a follower's fetch or a consumer's before v11 only while this broker
// leads it, a v11+ consumer's while it hosts it (KIP-392).
func (f *fetchPlan) stillServed(p *replica.Partition) bool {
	if f.anyReplica {
		return p.ServesConsumers()
	}
	return p.IsLeader()
}

// anyPreferred reports whether some partition names a preferred read
// replica, which answers the fetch at once (Kafka's fetchMessages).
func (f *fetchPlan) anyPreferred() bool {
	if f.choose == nil {
		return false
	}
	for _, fp := range f.parts {
		if fp.preferred >= 0 {
			return true
		}
	}
	return false
}

// countFetched books the partitions of a fetch as it arrived, as Kafka's
// ReplicaManager.fetchMessages marks TotalFetchRequestsPerSec for each
// partition read (authorized ones: the others are never read).
func (f *fetchPlan) countFetched() {
	for _, fp := range f.parts {
		err := fp.err
		if err == nil {
			err = fp.readErr
		}
		if errCode(err) == kerr.TopicAuthorizationFailed.Code {
			continue
		}
		f.stats.fetchedPartition(fp.stats, err)
	}
}

// countBytesOut books the record bytes a consumer's answer carries
// (BytesOutPerSec; Kafka counts a follower's as ReplicationBytesOutPerSec).
func (f *fetchPlan) countBytesOut() {
	if f.stats == nil || f.replicaID >= 0 {
		return
	}
	for _, fp := range f.parts {
		if fp.data != nil {
			f.stats.add(fp.stats, statBytesOut, uint64(fp.data.Len()))
		}
	}
}

// readTo is how far the fetch reads: a follower to the log end, a
// consumer as its isolation level says.
func (f *fetchPlan) readTo() replica.FetchIsolation {
	if f.replicaID >= 0 {
		return replica.FetchLogEnd
	}
	return f.isolation
}

// anyDiverging reports whether a follower's fetch found its log diverged,
// which it must learn at once to truncate.
func (f *fetchPlan) anyDiverging() bool {
	for _, fp := range f.parts {
		if fp.diverging != nil {
			return true
		}
	}
	return false
}

// anyError reports whether some partition failed, which answers a
// long-polling fetch at once (Kafka's DelayedFetch does the same).
func (f *fetchPlan) anyError() bool {
	for _, fp := range f.parts {
		if fp.err != nil || fp.readErr != nil {
			return true
		}
	}
	return false
}

// response builds the answer from the last read. For an incremental fetch
// only partitions with news are included, and the session learns what was
// sent. The returned holes are the partitions whose records are to be
// spliced in (their RecordBatches left nil).
func (f *fetchPlan) response() (*kmsg.FetchResponse, []frameHole) {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(f.version)
	if f.session != nil {
		resp.SessionID = f.session.id
		f.session.mu.Lock()
		defer f.session.mu.Unlock()
	}
	// Where each partition with records sits in resp.Topics.
	type at struct {
		t, p int
		data logstore.ReadResult
	}
	var where []at
	// Only an incremental fetch rotates its session by what had data.
	incremental := f.session != nil && !f.full
	var hadData map[sessionKey]bool
	for _, fp := range f.parts {
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition = fp.sp.key.partition
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
		rp.PreferredReadReplica = -1
		if fp.preferred >= 0 && fp.readErr == nil {
			rp.PreferredReadReplica = fp.preferred
		}
		// Kafka sends an empty record set, never a null one: librdkafka
		// refuses a MessageSetSize of -1.
		rp.RecordBatches = []byte{}
		switch {
		case fp.err != nil:
			rp.ErrorCode = errCode(fp.err)
		default:
			// Like Kafka, a read error leaves the offsets unknown (-1).
			if fp.readErr != nil {
				rp.ErrorCode = errCode(fp.readErr)
			} else {
				rp.HighWatermark = fp.info.HighWatermark
				rp.LastStableOffset = fp.info.LastStableOffset
				rp.LogStartOffset = fp.info.LogStartOffset
				rp.AbortedTransactions = abortedTransactions(fp.info.AbortedTransactions)
				if d := fp.diverging; d != nil {
					rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset = d.Epoch, d.EndOffset
				}
			}
		}
		if !f.full && !fp.sp.hasNews(&rp, fp.data) {
			continue
		}
		fp.sp.highWatermark, fp.sp.logStartOffset, fp.sp.lastStableOffset = rp.HighWatermark, rp.LogStartOffset, rp.LastStableOffset
		if fp.data != nil && incremental {
			if hadData == nil {
				hadData = map[sessionKey]bool{}
			}
			hadData[fp.sp.key] = true
		}
		n := len(resp.Topics)
		if n == 0 || resp.Topics[n-1].Topic != fp.sp.key.topic || resp.Topics[n-1].TopicID != fp.sp.key.topicID {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = fp.sp.key.topic, fp.sp.key.topicID
			resp.Topics = append(resp.Topics, rt)
			n++
		}
		resp.Topics[n-1].Partitions = append(resp.Topics[n-1].Partitions, rp)
		if fp.data != nil {
			where = append(where, at{n - 1, len(resp.Topics[n-1].Partitions) - 1, fp.data})
		}
	}
	if incremental {
		f.session.rotate(hadData)
	}
	// Slots are taken only now: appends above may have moved the slices.
	holes := make([]frameHole, len(where))
	for i, w := range where {
		holes[i] = frameHole{Slot: &resp.Topics[w.t].Partitions[w.p].RecordBatches, Data: w.data}
	}
	return resp, holes
}

// hasNews reports whether an incremental response must include the
// partition (KIP-227): records, an error, a preferred read replica
// (KIP-392), or a change of what the client was last told.
func (sp *sessionPartition) hasNews(rp *kmsg.FetchResponseTopicPartition, data logstore.ReadResult) bool {
	return data != nil || rp.ErrorCode != 0 || rp.PreferredReadReplica >= 0 ||
		rp.HighWatermark != sp.highWatermark ||
		rp.LogStartOffset != sp.logStartOffset ||
		rp.LastStableOffset != sp.lastStableOffset
}

// abortedTransactions is the response's list: null unless the read was
// read_committed, then the aborted transactions it overlapped, perhaps
// none (Kafka's FetchDataInfo.abortedTransactions: empty for
// read_committed, absent otherwise).
func abortedTransactions(txns []logstore.AbortedTxn) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	if txns == nil {
		return nil
	}
	out := make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(txns))
	for i, a := range txns {
		out[i] = kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		out[i].ProducerID, out[i].FirstOffset = a.ProducerID, a.FirstOffset
	}
	return out
}
