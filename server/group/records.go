package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record versions as Kafka 3.9 writes them (GroupMetadataManager with
// inter.broker.protocol.version >= 2.3): the key version tells the record
// kind (0 and 1 are offset commits, 2 is group metadata).
const (
	offsetCommitKeyVersion       = 1
	groupMetadataKeyVersion      = 2
	offsetCommitValueVersion     = 3
	offsetCommitValueV1          = 1 // only when an explicit expire timestamp is carried
	groupMetadataValueVersion    = 3
	noExpireTimestamp            = -1
	noLeaderEpoch                = -1
	consumerProtocolType         = "consumer"
	classicGroupType             = "classic"
	unknownMemberID              = ""
	allGroupAuthorizedOperations = 1<<3 | 1<<6 | 1<<8 // READ, DELETE, DESCRIBE
	authorizedOperationsOmitted  = -2147483648
)

type topicPartition struct {
	topic     string
	partition int32
}

// committedOffset is one committed offset (Kafka's OffsetAndMetadata).
type committedOffset struct {
	offset          int64
	leaderEpoch     int32
	metadata        string
	commitTimestamp int64 // ms
	expireTimestamp int64 // ms, noExpireTimestamp when none was requested
	// recordOffset is the base offset of the batch that holds the commit
	// in __consumer_offsets (Kafka's appendedBatchOffset): a transactional
	// commit that completes replaces a committed offset only if it was
	// written after it.
	recordOffset int64
}

// newerThan is Kafka's CommitRecordMetadataAndOffset.olderThan, reversed.
func (o committedOffset) newerThan(than committedOffset) bool {
	return o.recordOffset > than.recordOffset
}

func offsetCommitKey(group string, tp topicPartition) []byte {
	k := kmsg.NewOffsetCommitKey()
	k.Version = offsetCommitKeyVersion
	k.Group, k.Topic, k.Partition = group, tp.topic, tp.partition
	return k.AppendTo(nil)
}

func offsetCommitValue(o committedOffset) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetCommitValueVersion
	if o.expireTimestamp != noExpireTimestamp {
		v.Version = offsetCommitValueV1
	}
	v.Offset = o.offset
	v.LeaderEpoch = o.leaderEpoch
	v.Metadata = o.metadata
	v.CommitTimestamp = o.commitTimestamp
	v.ExpireTimestamp = o.expireTimestamp
	return v.AppendTo(nil)
}

func groupMetadataKey(group string) []byte {
	k := kmsg.NewGroupMetadataKey()
	k.Version = groupMetadataKeyVersion
	k.Group = group
	return k.AppendTo(nil)
}

// groupMetadataValue snapshots g with the given assignment; g.mu is held.
func groupMetadataValue(g *group, assignment map[string][]byte) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupMetadataValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocol != "" {
		p := g.protocol
		v.Protocol = &p
	}
	if g.leader != "" {
		l := g.leader
		v.Leader = &l
	}
	v.CurrentStateTimestamp = -1
	if !g.stateTimestamp.IsZero() {
		v.CurrentStateTimestamp = g.stateTimestamp.UnixMilli()
	}
	for _, id := range g.memberOrder {
		m := g.members[id]
		mv := kmsg.NewGroupMetadataValueMember()
		mv.MemberID = m.id
		mv.InstanceID = m.instanceID
		mv.ClientID = m.clientID
		mv.ClientHost = m.clientHost
		mv.RebalanceTimeoutMillis = int32(m.rebalanceTimeout.Milliseconds())
		mv.SessionTimeoutMillis = int32(m.sessionTimeout.Milliseconds())
		mv.Subscription = m.metadata(g.protocol)
		mv.Assignment = assignment[m.id]
		if mv.Assignment == nil {
			mv.Assignment = []byte{}
		}
		v.Members = append(v.Members, mv)
	}
	return v.AppendTo(nil)
}

// replayedPartition is what a __consumer_offsets partition holds, last
// record per key winning (Kafka's loadGroupsAndOffsets).
type replayedPartition struct {
	offsets groupOffsets
	groups  map[string]*kmsg.GroupMetadataValue
	// pending holds the TxnOffsetCommit records of transactions whose
	// marker has not been read (yet), by producer id.
	pending map[int64]groupOffsets
}

// groupOffsets are offsets by group id and partition.
type groupOffsets map[string]map[topicPartition]committedOffset

func (m groupOffsets) set(group string, tp topicPartition, o committedOffset) {
	offs := m[group]
	if offs == nil {
		offs = make(map[topicPartition]committedOffset)
		m[group] = offs
	}
	offs[tp] = o
}

func (m groupOffsets) remove(group string, tp topicPartition) {
	if offs := m[group]; offs != nil {
		delete(offs, tp)
		if len(offs) == 0 {
			delete(m, group)
		}
	}
}

func newReplayedPartition() *replayedPartition {
	return &replayedPartition{
		offsets: make(groupOffsets),
		groups:  make(map[string]*kmsg.GroupMetadataValue),
		pending: make(map[int64]groupOffsets),
	}
}

var errUnknownRecordKey = errors.New("unknown __consumer_offsets key version")

// applyBatch folds one batch into r and counts the records it skipped as
// unknown. A marker ends its producer's transaction: a commit makes the
// pending offsets committed unless a commit written later is already there
// (Kafka compares record offsets); an abort, or any marker other than a
// commit, drops them.
func (r *replayedPartition) applyBatch(b ReplayedBatch) (skipped int, err error) {
	if b.Control {
		if b.Commit {
			for group, offs := range r.pending[b.ProducerID] {
				for tp, o := range offs {
					if cur, ok := r.offsets[group][tp]; !ok || o.newerThan(cur) {
						r.offsets.set(group, tp, o)
					}
				}
			}
		}
		delete(r.pending, b.ProducerID)
		return 0, nil
	}
	for _, kv := range b.Records {
		err := r.apply(kv.Key, kv.Value, b)
		if errors.Is(err, errUnknownRecordKey) {
			skipped++
			continue
		}
		if err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

// apply folds one record of batch b into r; tombstones remove what they
// key. Offset commits of a transactional batch stay pending for the
// batch's producer; a transactional tombstone removes only a pending
// offset, as in Kafka.
func (r *replayedPartition) apply(key, value []byte, b ReplayedBatch) error {
	if len(key) < 2 {
		return fmt.Errorf("__consumer_offsets key of %d bytes", len(key))
	}
	switch binary.BigEndian.Uint16(key) {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("offset commit key: %w", err)
		}
		tp := topicPartition{k.Topic, k.Partition}
		target := r.offsets
		if b.Transactional {
			target = r.pending[b.ProducerID]
			if target == nil {
				target = make(groupOffsets)
				r.pending[b.ProducerID] = target
			}
		}
		if value == nil {
			target.remove(k.Group, tp)
			return nil
		}
		var v kmsg.OffsetCommitValue
		if err := v.ReadFrom(value); err != nil {
			return fmt.Errorf("offset commit value: %w", err)
		}
		o := committedOffset{
			offset:          v.Offset,
			leaderEpoch:     noLeaderEpoch,
			metadata:        v.Metadata,
			commitTimestamp: v.CommitTimestamp,
			expireTimestamp: noExpireTimestamp,
			recordOffset:    b.BaseOffset,
		}
		if v.Version >= 3 {
			o.leaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 {
			o.expireTimestamp = v.ExpireTimestamp
		}
		target.set(k.Group, tp, o)
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("group metadata key: %w", err)
		}
		if value == nil {
			delete(r.groups, k.Group)
			return nil
		}
		v := new(kmsg.GroupMetadataValue)
		if err := v.ReadFrom(value); err != nil {
			return fmt.Errorf("group metadata value: %w", err)
		}
		r.groups[k.Group] = v
	default:
		// Kafka 3.9 also keeps transaction and new-protocol records here,
		// which this coordinator does not write; skip rather than fail the
		// load, the way a newer broker's records would be skipped.
		return errUnknownRecordKey
	}
	return nil
}
