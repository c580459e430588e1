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
// record per key winning.
type replayedPartition struct {
	offsets map[string]map[topicPartition]committedOffset
	groups  map[string]*kmsg.GroupMetadataValue
}

var errUnknownRecordKey = errors.New("unknown __consumer_offsets key version")

// apply folds one record into r; tombstones remove what they key.
func (r *replayedPartition) apply(key, value []byte) error {
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
		if value == nil {
			if m := r.offsets[k.Group]; m != nil {
				delete(m, tp)
				if len(m) == 0 {
					delete(r.offsets, k.Group)
				}
			}
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
		}
		if v.Version >= 3 {
			o.leaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 {
			o.expireTimestamp = v.ExpireTimestamp
		}
		m := r.offsets[k.Group]
		if m == nil {
			m = make(map[topicPartition]committedOffset)
			r.offsets[k.Group] = m
		}
		m[tp] = o
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
