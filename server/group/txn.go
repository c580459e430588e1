package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnOffsetCommit serves TxnOffsetCommit v0-3 (KIP-98; v3 adds the member
// fields of KIP-447). The offsets are written as a transactional batch of
// the producer and stay pending, invisible to OffsetFetch, until
// CompleteTransaction reports the producer's marker. A group that does not
// exist is created Empty, as Kafka does.
func (c *Coordinator) TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	codes := make([][]int16, len(req.Topics))
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
	}
	if code := c.txnCommit(ctx, req, codes); code != 0 {
		for i := range codes {
			for j := range codes[i] {
				if codes[i][j] == 0 {
					codes[i][j] = code
				}
			}
		}
	}
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	resp.Version = req.Version
	for i, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for j, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[i][j]
			// KafkaApis: producers before 2.0 (v0-1) crash on
			// COORDINATOR_LOAD_IN_PROGRESS (KAFKA-7296).
			if req.Version < 2 && rp.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
				rp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// txnCommit fills per-partition codes and returns a code for every
// partition still at 0, in Kafka's order: unknown partitions
// (KafkaApis), the group's status, KIP-890 verification, the member
// (validateOffsetCommit), the metadata size, the append.
func (c *Coordinator) txnCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest, codes [][]int16) int16 {
	known := 0
	for i, t := range req.Topics {
		for j, p := range t.Partitions {
			if c.cfg.TopicPartitionExists != nil && !c.cfg.TopicPartitionExists(t.Topic, p.Partition) {
				codes[i][j] = kerr.UnknownTopicOrPartition.Code
				continue
			}
			known++
		}
	}
	if known == 0 {
		return 0 // Kafka answers without reaching the coordinator
	}
	if req.Group == "" {
		return kerr.InvalidGroupID.Code
	}
	if code := c.status(req.Group); code != 0 {
		return code
	}
	g := c.getOrCreate(req.Group, true)
	if g == nil {
		return kerr.NotCoordinator.Code
	}
	// Verification may ask another broker: no group lock is held.
	var guard VerificationGuard
	if verify := c.cfg.VerifyTransaction; verify != nil {
		var err error
		guard, err = verify(ctx, TxnVerification{
			TransactionalID: req.TransactionalID,
			ProducerID:      req.ProducerID,
			ProducerEpoch:   req.ProducerEpoch,
			Partition:       g.partition,
			Abortable:       req.Version >= 4,
		})
		if err != nil {
			return offsetCommitErrorCode(err)
		}
	}
	generation, memberID := int32(-1), unknownMemberID
	var instanceID *string
	if req.Version >= 3 {
		generation, memberID, instanceID = req.Generation, req.MemberID, req.InstanceID
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if code := validateOffsetCommit(g, generation, memberID, instanceID, true); code != 0 {
		return code
	}
	now := c.clock.Now().UnixMilli()
	var (
		records []KV
		tps     []topicPartition
		values  []committedOffset
		where   [][2]int
	)
	for i, t := range req.Topics {
		for j, p := range t.Partitions {
			if codes[i][j] != 0 {
				continue
			}
			tp := topicPartition{t.Topic, p.Partition}
			o := committedOffset{offset: p.Offset, leaderEpoch: noLeaderEpoch, commitTimestamp: now, expireTimestamp: noExpireTimestamp}
			if p.Metadata != nil {
				o.metadata = *p.Metadata
			}
			if len(o.metadata) > c.cfg.OffsetMetadataMaxSize {
				codes[i][j] = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			if req.Version >= 2 {
				o.leaderEpoch = p.LeaderEpoch
			}
			records = append(records, KV{offsetCommitKey(g.id, tp), offsetCommitValue(o)})
			tps, values = append(tps, tp), append(values, o)
			where = append(where, [2]int{i, j})
		}
	}
	if len(records) == 0 {
		return 0
	}
	base, code := c.appendTxnOffsets(ctx, g.partition, req.ProducerID, req.ProducerEpoch, guard, records)
	if code != 0 {
		for _, w := range where {
			codes[w[0]][w[1]] = code
		}
		return 0
	}
	pending := g.pendingTxn[req.ProducerID]
	if pending == nil {
		pending = make(map[topicPartition]committedOffset)
		g.pendingTxn[req.ProducerID] = pending
	}
	for i, tp := range tps {
		values[i].recordOffset = base
		pending[tp] = values[i]
	}
	c.trackTxn(g, req.ProducerID)
	return 0
}

// validateOffsetCommit is Kafka's GroupCoordinator.validateOffsetCommit.
// Commits with no generation are anyone's while the group is Empty; a
// commit naming a member must be from a current member of the current
// generation. Transactional commits of v0-2 name no member, so they are
// accepted into groups with members too.
func validateOffsetCommit(g *group, generation int32, memberID string, instanceID *string, transactional bool) int16 {
	switch {
	case g.state == stateDead:
		return kerr.CoordinatorNotAvailable.Code
	case generation < 0 && g.state == stateEmpty:
		return 0
	case generation >= 0 || memberID != unknownMemberID || instanceID != nil:
		if code := g.validateCurrentMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
		return 0
	case !transactional && g.state != stateEmpty:
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// validateCurrentMember is Kafka's validateCurrentMember: a group instance
// id must be known and mapped to memberID, and memberID must be a member.
func (g *group) validateCurrentMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		cur, ok := g.static[*instanceID]
		switch {
		case !ok:
			return kerr.UnknownMemberID.Code
		case cur != memberID:
			return kerr.FencedInstanceID.Code
		}
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// CompleteTransaction applies a transaction marker of producerID that the
// broker appended to __consumer_offsets-partition: a commit makes the
// producer's pending offsets of every group on the partition committed
// (each unless a commit written after it is already there, Kafka's
// completePendingTxnOffsetCommit), an abort drops them. The broker calls it
// once the marker is written and before it answers WriteTxnMarkers, so the
// producer's next transaction cannot have written offsets yet. A marker for
// a partition still loading is applied when the load ends; for a partition
// not loaded here it is ignored (its new coordinator replays the marker).
func (c *Coordinator) CompleteTransaction(partition int32, producerID int64, commit bool) {
	c.completeTransaction(partition, producerID, commit, false)
}

// completeTransaction is CompleteTransaction; applyingDeferred is set when
// the load of the partition applies the markers it deferred.
func (c *Coordinator) completeTransaction(partition int32, producerID int64, commit, applyingDeferred bool) {
	c.mu.Lock()
	ps := c.partitions[partition]
	if ps == nil {
		c.mu.Unlock()
		return
	}
	if ps.status == partitionLoading && !applyingDeferred {
		ps.deferredMarkers = append(ps.deferredMarkers, txnMarker{producerID, commit})
		c.mu.Unlock()
		return
	}
	var gs []*group
	for id := range ps.txnGroups[producerID] {
		if g := c.groups[id]; g != nil && g.partition == partition {
			gs = append(gs, g)
		}
	}
	delete(ps.txnGroups, producerID)
	c.mu.Unlock()
	for _, g := range gs {
		g.mu.Lock()
		if g.state != stateDead {
			g.completeTxn(producerID, commit)
		}
		g.mu.Unlock()
	}
}

// txnMarker is a transaction marker reported while its partition loaded.
type txnMarker struct {
	producerID int64
	commit     bool
}

// completeTxn ends producerID's transaction in g; g.mu is held.
func (g *group) completeTxn(producerID int64, commit bool) {
	pending := g.pendingTxn[producerID]
	delete(g.pendingTxn, producerID)
	if !commit {
		return
	}
	for tp, o := range pending {
		if cur, ok := g.offsets[tp]; !ok || o.newerThan(cur) {
			g.offsets[tp] = o
		}
	}
}

// hasPendingTxn is Kafka's hasPendingOffsetCommitsForTopicPartition. Only
// transactional commits can be pending here: a plain commit holds g.mu
// until its append returned.
func (g *group) hasPendingTxn(tp topicPartition) bool {
	for _, pending := range g.pendingTxn {
		if _, ok := pending[tp]; ok {
			return true
		}
	}
	return false
}

// hasOffsets is Kafka's GroupMetadata.hasOffsets: pending transactional
// offsets keep an Empty group alive.
func (g *group) hasOffsets() bool {
	return len(g.offsets) > 0 || len(g.pendingTxn) > 0
}

// dropPendingTxn removes the pending offsets of tps from every producer,
// as Kafka's removeOffsets does for OffsetDelete and DeleteGroups.
func (g *group) dropPendingTxn(tps []topicPartition) {
	for pid, pending := range g.pendingTxn {
		for _, tp := range tps {
			delete(pending, tp)
		}
		if len(pending) == 0 {
			delete(g.pendingTxn, pid)
		}
	}
}

// trackTxn records that producerID has pending offsets in g, so that
// CompleteTransaction finds g without scanning every group (Kafka's
// openGroupsForProducer). Called with g.mu held.
func (c *Coordinator) trackTxn(g *group, producerID int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := c.partitions[g.partition]
	if ps == nil {
		return
	}
	if ps.txnGroups == nil {
		ps.txnGroups = make(map[int64]map[string]struct{})
	}
	ids := ps.txnGroups[producerID]
	if ids == nil {
		ids = make(map[string]struct{})
		ps.txnGroups[producerID] = ids
	}
	ids[g.id] = struct{}{}
}
