package kafkazk

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Payloads of Kafka's znodes (ZkData.scala). Each type has encode (Kafka's
// bytes, field order as Kafka writes them) and a decode that is as
// lenient as Kafka's reader: required keys are checked, others optional,
// unknown keys ignored.

// controllerZNode is /controller. Only brokerid is read back by Kafka.
type controllerZNode struct {
	// Version is 2 for 3.x (with kraftControllerEpoch), 1 for 2.x.
	Version   int
	BrokerID  int32
	Timestamp int64 // ms; written as a decimal string
}

func (c controllerZNode) encode() []byte {
	var o jsonObject
	v := c.Version
	if v == 0 {
		v = 2
	}
	o.add("version", v)
	o.add("brokerid", c.BrokerID)
	o.add("timestamp", strconv.FormatInt(c.Timestamp, 10))
	if v >= 2 {
		// -1: written by a ZooKeeper-mode broker, not a KRaft controller
		// in migration.
		o.add("kraftControllerEpoch", -1)
	}
	return mustMarshal(o)
}

func decodeControllerZNode(b []byte) (controllerZNode, error) {
	var c controllerZNode
	f, err := parseFields("/controller", b)
	if err != nil {
		return c, err
	}
	if err := f.get("brokerid", &c.BrokerID, true); err != nil {
		return c, fmt.Errorf("/controller: %w", err)
	}
	if err := f.get("version", &c.Version, false); err != nil {
		return c, fmt.Errorf("/controller: %w", err)
	}
	if err := f.getStringInt64("timestamp", &c.Timestamp, false); err != nil {
		return c, fmt.Errorf("/controller: %w", err)
	}
	return c, nil
}

// /controller_epoch holds plain decimal text.
func encodeControllerEpoch(epoch int32) []byte { return []byte(strconv.Itoa(int(epoch))) }

// DecodeControllerEpoch reads /controller_epoch.
func DecodeControllerEpoch(b []byte) (int32, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("/controller_epoch %q: %w", b, err)
	}
	return int32(v), nil
}

// TopicZNode is /brokers/topics/<t>.
type TopicZNode struct {
	// Version 3 (3.x, topic ids) or 2 (2.x, no topic_id).
	Version    int
	TopicID    [16]byte // zero: no topic_id written (and none read)
	Partitions ReplicaMap
	Adding     ReplicaMap
	Removing   ReplicaMap
}

func (t TopicZNode) Encode() []byte {
	adding, removing := t.Adding, t.Removing
	if adding == nil {
		adding = ReplicaMap{}
	}
	if removing == nil {
		removing = ReplicaMap{}
	}
	partitions := t.Partitions
	if partitions == nil {
		partitions = ReplicaMap{}
	}
	var o jsonObject
	if t.Version == 2 {
		o.add("version", 2)
		o.add("partitions", partitions)
		o.add("adding_replicas", adding)
		o.add("removing_replicas", removing)
		return mustMarshal(o)
	}
	o.add("partitions", partitions)
	if t.TopicID != ([16]byte{}) {
		o.add("topic_id", EncodeUUID(t.TopicID))
	}
	o.add("adding_replicas", adding)
	o.add("removing_replicas", removing)
	o.add("version", 3)
	return mustMarshal(o)
}

// DecodeTopicZNode reads /brokers/topics/<t>.
func DecodeTopicZNode(b []byte) (TopicZNode, error) {
	var t TopicZNode
	f, err := parseFields("topic znode", b)
	if err != nil {
		return t, err
	}
	var id string
	for _, e := range []error{
		f.get("version", &t.Version, false),
		f.get("partitions", &t.Partitions, true),
		f.get("adding_replicas", &t.Adding, false),
		f.get("removing_replicas", &t.Removing, false),
		f.get("topic_id", &id, false),
	} {
		if e != nil {
			return t, fmt.Errorf("topic znode: %w", e)
		}
	}
	if id != "" {
		if t.TopicID, err = decodeUUID(id); err != nil {
			return t, fmt.Errorf("topic znode: %w", err)
		}
	}
	return t, nil
}

// Kafka's Uuid.toString: URL-safe base64 without padding, 22 characters.
func EncodeUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func decodeUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("uuid %q: not 16 bytes of URL-safe base64", s)
	}
	copy(id[:], b)
	return id, nil
}

// Leader recovery states (KIP-704).
const (
	LeaderRecovered  int8 = 0
	LeaderRecovering int8 = 1
)

// PartitionStateZNode is /brokers/topics/<t>/partitions/<p>/state. Its
// zkVersion is the partition epoch, held by the caller next to it.
type PartitionStateZNode struct {
	Leader              int32 // -1: no leader
	LeaderEpoch         int32
	ISR                 []int32
	ControllerEpoch     int32
	LeaderRecoveryState int8
}

func (p PartitionStateZNode) Encode() []byte {
	isr := p.ISR
	if isr == nil {
		isr = []int32{}
	}
	var o jsonObject
	o.add("controller_epoch", p.ControllerEpoch)
	o.add("leader", p.Leader)
	o.add("version", 1)
	o.add("leader_epoch", p.LeaderEpoch)
	o.add("isr", isr)
	// Written only when not RECOVERED. Kafka's position for this key is
	// hash order and not pinned by any example; last is our choice.
	if p.LeaderRecoveryState != LeaderRecovered {
		o.add("leader_recovery_state", p.LeaderRecoveryState)
	}
	return mustMarshal(o)
}

// DecodePartitionStateZNode reads a partition's state znode.
func DecodePartitionStateZNode(b []byte) (PartitionStateZNode, error) {
	var p PartitionStateZNode
	f, err := parseFields("partition state", b)
	if err != nil {
		return p, err
	}
	for _, e := range []error{
		f.get("leader", &p.Leader, true),
		f.get("leader_epoch", &p.LeaderEpoch, true),
		f.get("isr", &p.ISR, true),
		f.get("controller_epoch", &p.ControllerEpoch, true),
		f.get("leader_recovery_state", &p.LeaderRecoveryState, false),
	} {
		if e != nil {
			return p, fmt.Errorf("partition state: %w", e)
		}
	}
	if p.LeaderRecoveryState != LeaderRecovered && p.LeaderRecoveryState != LeaderRecovering {
		return p, fmt.Errorf("partition state: unknown leader_recovery_state %d", p.LeaderRecoveryState)
	}
	return p, nil
}

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) json() jsonObject {
	return jsonObject{{"topic", tp.Topic}, {"partition", tp.Partition}}
}

type rawTopicPartition struct {
	Topic     *string `json:"topic"`
	Partition *int32  `json:"partition"`
}

func (r rawTopicPartition) check() (TopicPartition, error) {
	if r.Topic == nil || r.Partition == nil {
		return TopicPartition{}, fmt.Errorf("partition entry needs topic and partition")
	}
	return TopicPartition{*r.Topic, *r.Partition}, nil
}

// EncodePartitionList is the payload of /isr_change_notification/isr_change_*
// and /admin/preferred_replica_election.
func EncodePartitionList(ps []TopicPartition) []byte {
	list := make([]jsonObject, len(ps))
	for i, tp := range ps {
		list[i] = tp.json()
	}
	return mustMarshal(jsonObject{{"version", 1}, {"partitions", list}})
}

// DecodePartitionList reads an isr_change notification's partitions.
func DecodePartitionList(b []byte) ([]TopicPartition, error) {
	f, err := parseFields("partition list", b)
	if err != nil {
		return nil, err
	}
	var raw []rawTopicPartition
	if err := f.get("partitions", &raw, true); err != nil {
		return nil, fmt.Errorf("partition list: %w", err)
	}
	out := make([]TopicPartition, 0, len(raw))
	for _, r := range raw {
		tp, err := r.check()
		if err != nil {
			return nil, err
		}
		out = append(out, tp)
	}
	return out, nil
}

// reassignment is one entry of the legacy /admin/reassign_partitions.
type reassignment struct {
	TopicPartition
	Replicas []int32
}

func encodeReassignPartitions(rs []reassignment) []byte {
	list := make([]jsonObject, len(rs))
	for i, r := range rs {
		replicas := r.Replicas
		if replicas == nil {
			replicas = []int32{}
		}
		list[i] = append(r.json(), jsonField{"replicas", replicas})
	}
	return mustMarshal(jsonObject{{"version", 1}, {"partitions", list}})
}

func decodeReassignPartitions(b []byte) ([]reassignment, error) {
	f, err := parseFields("/admin/reassign_partitions", b)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		rawTopicPartition
		Replicas []int32 `json:"replicas"`
	}
	if err := f.get("partitions", &raw, true); err != nil {
		return nil, fmt.Errorf("/admin/reassign_partitions: %w", err)
	}
	out := make([]reassignment, 0, len(raw))
	for _, r := range raw {
		tp, err := r.check()
		if err != nil {
			return nil, err
		}
		out = append(out, reassignment{tp, r.Replicas})
	}
	return out, nil
}

// LogDirEventZNode is /log_dir_event_notification/log_dir_event_*.
type LogDirEventZNode struct {
	Broker int32
	Event  int32 // 1 = log directory failure
}

const LogDirFailureEvent int32 = 1

func (l LogDirEventZNode) Encode() []byte {
	return mustMarshal(jsonObject{{"version", 1}, {"broker", l.Broker}, {"event", l.Event}})
}

// DecodeLogDirEventZNode reads a log_dir_event notification.
func DecodeLogDirEventZNode(b []byte) (LogDirEventZNode, error) {
	var l LogDirEventZNode
	f, err := parseFields("log dir event", b)
	if err != nil {
		return l, err
	}
	if err := f.get("broker", &l.Broker, true); err != nil {
		return l, fmt.Errorf("log dir event: %w", err)
	}
	if err := f.get("event", &l.Event, true); err != nil {
		return l, fmt.Errorf("log dir event: %w", err)
	}
	return l, nil
}
