package group

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit serves OffsetCommit v0-v9 (topics by name). Offsets are
// acknowledged only after the append to __consumer_offsets returned.
// Generation -1 with no member id is a simple (non-group) commit, accepted
// while the group has no members. v0 commits are stored in
// __consumer_offsets too, where Kafka 3.9 in ZooKeeper mode kept them in
// ZooKeeper.
func (c *Coordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = req.Version
	codes := make([][]int16, len(req.Topics))
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
	}
	setAll := func(code int16) {
		for i := range codes {
			for j := range codes[i] {
				if codes[i][j] == 0 {
					codes[i][j] = code
				}
			}
		}
	}
	if code := c.commit(ctx, req, codes); code != 0 {
		setAll(code)
	}
	for i, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for j, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = codes[i][j]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// commit fills per-partition codes and returns a code for every partition
// still at 0.
func (c *Coordinator) commit(ctx context.Context, req *kmsg.OffsetCommitRequest, codes [][]int16) int16 {
	generation, memberID := int32(-1), unknownMemberID
	var instanceID *string
	if req.Version >= 1 {
		generation, memberID = req.Generation, req.MemberID
	}
	if req.Version >= 7 {
		instanceID = req.InstanceID
	}
	if code := c.status(req.Group); code != 0 {
		return code
	}
	g := c.lookup(req.Group)
	if g == nil {
		if generation >= 0 {
			// A generation from a group this coordinator does not know.
			return kerr.IllegalGeneration.Code
		}
		if g = c.getOrCreate(req.Group, true); g == nil {
			return kerr.NotCoordinator.Code
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if code := validateOffsetCommit(g, generation, memberID, instanceID, false); code != 0 {
		return code
	}
	switch g.state {
	case stateCompletingRebalance:
		// The member has the new generation but not its assignment yet.
		return kerr.RebalanceInProgress.Code
	case stateStable, statePreparingRebalance:
		// Commits stay allowed while rebalancing: the heartbeat tells the
		// member about the rebalance.
		if m := g.members[memberID]; m != nil {
			c.scheduleHeartbeat(g, m, m.sessionTimeout)
		}
	}
	now := c.clock.Now().UnixMilli()
	expire := int64(noExpireTimestamp)
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
		expire = now + req.RetentionTimeMillis
	}
	var (
		records []KV
		tps     []topicPartition
		values  []committedOffset
		where   [][2]int
	)
	for i, t := range req.Topics {
		for j, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			if c.cfg.TopicPartitionExists != nil && !c.cfg.TopicPartitionExists(tp.topic, tp.partition) {
				codes[i][j] = kerr.UnknownTopicOrPartition.Code
				continue
			}
			o := committedOffset{offset: p.Offset, leaderEpoch: noLeaderEpoch, commitTimestamp: now, expireTimestamp: expire}
			if p.Metadata != nil {
				o.metadata = *p.Metadata
			}
			if len(o.metadata) > c.cfg.OffsetMetadataMaxSize {
				codes[i][j] = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			if req.Version >= 6 {
				o.leaderEpoch = p.LeaderEpoch
			}
			if req.Version == 1 && p.Timestamp != -1 {
				o.commitTimestamp = p.Timestamp
			}
			records = append(records, KV{offsetCommitKey(g.id, tp), offsetCommitValue(o)})
			tps, values = append(tps, tp), append(values, o)
			where = append(where, [2]int{i, j})
		}
	}
	if len(records) == 0 {
		return 0
	}
	base, code := c.appendOffsets(ctx, g.partition, records)
	if code != 0 {
		for _, w := range where {
			codes[w[0]][w[1]] = code
		}
		return 0
	}
	for i, tp := range tps {
		values[i].recordOffset = base
		g.offsets[tp] = values[i]
	}
	return 0
}

// OffsetFetch serves OffsetFetch: v0-7 for one group, v8+ for several. Null
// topics (v2+) mean every partition the group committed. Offsets of open
// transactions are never returned; with requireStable (v7+, KIP-447) a
// partition that has one answers UNSTABLE_OFFSET_COMMIT, per partition at
// every version, as Kafka's GroupMetadataManager.getOffsets does.
func (c *Coordinator) OffsetFetch(_ context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = req.Version
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			var want map[string][]int32
			if rg.Topics != nil {
				want = make(map[string][]int32)
				for _, t := range rg.Topics {
					want[t.Topic] = append(want[t.Topic], t.Partitions...)
				}
			}
			code, got := c.fetchOffsets(rg.Group, req.RequireStable, rg.Topics != nil, topicOrder(rg.Topics), want)
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = rg.Group, code
			for _, ft := range got {
				t := kmsg.NewOffsetFetchResponseGroupTopic()
				t.Topic = ft.topic
				for _, fp := range ft.partitions {
					p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					p.Partition, p.Offset, p.LeaderEpoch, p.ErrorCode = fp.partition, fp.offset, fp.leaderEpoch, fp.errorCode
					md := fp.metadata
					p.Metadata = &md
					t.Partitions = append(t.Partitions, p)
				}
				g.Topics = append(g.Topics, t)
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp
	}
	listed := req.Topics != nil || req.Version < 2
	var want map[string][]int32
	var order []string
	if listed {
		want = make(map[string][]int32)
		for _, t := range req.Topics {
			if _, ok := want[t.Topic]; !ok {
				order = append(order, t.Topic)
			}
			want[t.Topic] = append(want[t.Topic], t.Partitions...)
		}
	}
	code, got := c.fetchOffsets(req.Group, req.Version >= 7 && req.RequireStable, listed, order, want)
	resp.ErrorCode = code
	if code != 0 && req.Version < 2 {
		// v0-1 have no group error field: Kafka repeats it per partition.
		got = nil
		for _, t := range order {
			ft := fetchedTopic{topic: t}
			for _, p := range want[t] {
				ft.partitions = append(ft.partitions, fetchedPartition{partition: p, offset: -1, leaderEpoch: noLeaderEpoch, errorCode: code})
			}
			got = append(got, ft)
		}
	}
	for _, ft := range got {
		t := kmsg.NewOffsetFetchResponseTopic()
		t.Topic = ft.topic
		for _, fp := range ft.partitions {
			p := kmsg.NewOffsetFetchResponseTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch, p.ErrorCode = fp.partition, fp.offset, fp.leaderEpoch, fp.errorCode
			md := fp.metadata
			p.Metadata = &md
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func topicOrder(ts []kmsg.OffsetFetchRequestGroupTopic) []string {
	var order []string
	seen := make(map[string]bool)
	for _, t := range ts {
		if !seen[t.Topic] {
			seen[t.Topic] = true
			order = append(order, t.Topic)
		}
	}
	return order
}

type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    string
	errorCode   int16
}

type fetchedTopic struct {
	topic      string
	partitions []fetchedPartition
}

// fetchOffsets answers one group: the listed partitions (offset -1 when
// none is committed) or, when listed is false, all committed ones.
func (c *Coordinator) fetchOffsets(groupID string, requireStable, listed bool, order []string, want map[string][]int32) (int16, []fetchedTopic) {
	if code := c.status(groupID); code != 0 {
		return code, nil
	}
	if g := c.lookup(groupID); g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.state != stateDead {
			if !listed {
				order, want = sortedTopics(g.offsets)
			}
			unstable := func(tp topicPartition) bool { return requireStable && g.hasPendingTxn(tp) }
			return 0, buildFetched(order, want, g.offsets, unstable)
		}
	}
	if !listed {
		return 0, nil
	}
	return 0, buildFetched(order, want, nil, func(topicPartition) bool { return false })
}

func buildFetched(order []string, want map[string][]int32, offsets map[topicPartition]committedOffset, unstable func(topicPartition) bool) []fetchedTopic {
	out := make([]fetchedTopic, 0, len(order))
	for _, t := range order {
		ft := fetchedTopic{topic: t}
		for _, p := range want[t] {
			tp := topicPartition{t, p}
			fp := fetchedPartition{partition: p, offset: -1, leaderEpoch: noLeaderEpoch}
			if unstable(tp) {
				fp.errorCode = kerr.UnstableOffsetCommit.Code
			} else if o, ok := offsets[tp]; ok {
				fp.offset, fp.leaderEpoch, fp.metadata = o.offset, o.leaderEpoch, o.metadata
			}
			ft.partitions = append(ft.partitions, fp)
		}
		out = append(out, ft)
	}
	return out
}

// OffsetDelete serves OffsetDelete (KIP-496): an Empty group may drop any
// offset; a consumer group with members only those of topics none of its
// members subscribes to.
func (c *Coordinator) OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = req.Version
	if code := c.status(req.Group); code != 0 {
		resp.ErrorCode = code
		return resp
	}
	g := c.lookup(req.Group)
	if g == nil {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.state {
	case stateDead:
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	case stateEmpty:
	default:
		if g.protocolType != consumerProtocolType {
			resp.ErrorCode = kerr.NonEmptyGroup.Code
			return resp
		}
	}
	var deletable []topicPartition
	codes := make(map[topicPartition]int16)
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			switch {
			case c.cfg.TopicPartitionExists != nil && !c.cfg.TopicPartitionExists(tp.topic, tp.partition):
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			case g.state != stateEmpty && g.subscribedTopics[tp.topic]:
				codes[tp] = kerr.GroupSubscribedToTopic.Code
			default:
				deletable = append(deletable, tp)
			}
		}
	}
	if len(deletable) > 0 {
		if code := c.deleteOffsets(ctx, g, deletable, removeDeleted); code != 0 {
			for _, tp := range deletable {
				codes[tp] = code
			}
		}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = codes[topicPartition{t.Topic, p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// offsetRemoval says why offsets are removed, which decides what happens
// to pending transactional offsets of the same partitions (Kafka's
// removeOffsets drops them, removeExpiredOffsets keeps them).
type offsetRemoval int

const (
	removeExpired offsetRemoval = iota // retention: pending offsets stay and keep the group alive
	removeDeleted                      // OffsetDelete: pending offsets of the partitions go too
	removeGroup                        // DeleteGroups: the group goes with everything it holds
)

// deleteOffsets writes tombstones for tps (and, when the group is left
// Empty without committed or pending offsets or the group is deleted, for
// the group itself, which then turns Dead and leaves the cache). Nothing
// changes in memory unless the append succeeded. g.mu is held.
func (c *Coordinator) deleteOffsets(ctx context.Context, g *group, tps []topicPartition, why offsetRemoval) int16 {
	var records []KV
	remaining := len(g.offsets)
	for _, tp := range tps {
		if _, ok := g.offsets[tp]; ok {
			remaining--
		}
		records = append(records, KV{Key: offsetCommitKey(g.id, tp)})
	}
	pendingLeft := len(g.pendingTxn) > 0
	if why == removeDeleted {
		pendingLeft = false
		for _, pending := range g.pendingTxn {
			for tp := range pending {
				if !slices.Contains(tps, tp) {
					pendingLeft = true
				}
			}
		}
	}
	dead := why == removeGroup || (g.state == stateEmpty && remaining == 0 && !pendingLeft)
	if dead {
		records = append(records, KV{Key: groupMetadataKey(g.id)})
	}
	if len(records) == 0 {
		return 0
	}
	if code := c.append(ctx, g.partition, records); code != 0 {
		return code
	}
	for _, tp := range tps {
		delete(g.offsets, tp)
	}
	if why == removeDeleted {
		g.dropPendingTxn(tps)
	}
	if dead {
		g.stopTimers()
		g.transition(stateDead, c.clock.Now())
		c.removeGroup(g)
	}
	return 0
}

func sortedTopics(offsets map[topicPartition]committedOffset) ([]string, map[string][]int32) {
	want := make(map[string][]int32)
	for tp := range offsets {
		want[tp.topic] = append(want[tp.topic], tp.partition)
	}
	order := make([]string, 0, len(want))
	for t, ps := range want {
		order = append(order, t)
		slices.Sort(ps)
	}
	slices.Sort(order)
	return order, want
}

// scheduleRetention arms the periodic offset expiry
// (offsets.retention.check.interval.ms).
func (c *Coordinator) scheduleRetention() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.retentionTimer = c.clock.AfterFunc(c.cfg.OffsetsRetentionCheckInterval, func() {
		c.ExpireOffsets()
		c.scheduleRetention()
	})
}

// ExpireOffsets removes offsets older than offsets.retention.minutes, with
// Kafka's KIP-211 rules, and deletes groups left Empty without offsets;
// offsets of open transactions neither expire nor let their group go. It
// runs every offsets.retention.check.interval.ms; it is exported for tools
// and tests.
func (c *Coordinator) ExpireOffsets() {
	c.mu.Lock()
	gs := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		// A loading partition's groups wait for its deferred markers.
		if ps := c.partitions[g.partition]; ps != nil && ps.status == partitionLoaded {
			gs = append(gs, g)
		}
	}
	c.mu.Unlock()
	now := c.clock.Now()
	removed := 0
	for _, g := range gs {
		g.mu.Lock()
		if g.state != stateDead {
			expired := c.expiredOffsets(g, now)
			if len(expired) > 0 || (g.state == stateEmpty && !g.hasOffsets()) {
				if c.deleteOffsets(context.Background(), g, expired, removeExpired) == 0 {
					removed += len(expired)
				}
			}
		}
		g.mu.Unlock()
	}
	if removed > 0 {
		c.logger.Info("expired committed offsets", "count", removed)
	}
}

// expiredOffsets applies KIP-211: an Empty group's offsets expire a
// retention period after it became Empty; a Stable consumer group's only
// for topics it no longer subscribes to; a group without a protocol (simple
// consumers) a retention period after each commit. An explicit expire
// timestamp (OffsetCommit v2-4 retention) always wins.
func (c *Coordinator) expiredOffsets(g *group, now time.Time) []topicPartition {
	nowMs := now.UnixMilli()
	retention := c.cfg.OffsetsRetention.Milliseconds()
	var base func(o committedOffset) int64
	var subscribed map[string]bool
	switch {
	case g.protocolType != "" && g.state == stateEmpty:
		base = func(o committedOffset) int64 {
			if g.stateTimestamp.IsZero() {
				return o.commitTimestamp
			}
			return g.stateTimestamp.UnixMilli()
		}
	case g.protocolType == consumerProtocolType && g.subscribedTopics != nil && g.state == stateStable:
		base = func(o committedOffset) int64 { return o.commitTimestamp }
		subscribed = g.subscribedTopics
	case g.protocolType == "":
		base = func(o committedOffset) int64 { return o.commitTimestamp }
	default:
		return nil
	}
	var out []topicPartition
	for tp, o := range g.offsets {
		if subscribed[tp.topic] {
			continue
		}
		if o.expireTimestamp != noExpireTimestamp {
			if nowMs >= o.expireTimestamp {
				out = append(out, tp)
			}
		} else if nowMs-base(o) >= retention {
			out = append(out, tp)
		}
	}
	return out
}
