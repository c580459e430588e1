package replica

import (
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
)

// Partition is one hosted partition. In standalone mode this broker is the
// only replica, so the ISR is {self} and every append is committed at once:
// the high watermark follows the log end offset.
type Partition struct {
	Topic   string
	Index   int32
	TopicID [16]byte

	log logstore.Log

	// attached is state that layers above keep per partition (the data
	// path's producer table and append lock); it lives and dies with the
	// partition, so a deleted and recreated topic starts clean.
	attachOnce sync.Once
	attached   any

	mu            sync.Mutex
	leader        bool
	leaderID      int32 // the leading broker when this one follows
	leaderEpoch   int32
	highWatermark int64
	changed       chan struct{}
}

// NewLeader returns a partition led by this broker at leaderEpoch.
func NewLeader(topic string, index int32, topicID [16]byte, log logstore.Log, leaderEpoch int32) *Partition {
	return &Partition{
		Topic:         topic,
		Index:         index,
		TopicID:       topicID,
		log:           log,
		leader:        true,
		leaderEpoch:   leaderEpoch,
		highWatermark: log.LogEndOffset(),
		changed:       make(chan struct{}),
	}
}

// Attached returns the partition's attached state, creating it with init
// on first use. Every caller must pass an init returning the same type.
func (p *Partition) Attached(init func() any) any {
	p.attachOnce.Do(func() { p.attached = init() })
	return p.attached
}

// Log is the partition's local log.
func (p *Partition) Log() logstore.Log { return p.log }

// NewFollower returns a partition this broker follows; leader is the
// leading broker's id.
func NewFollower(topic string, index int32, topicID [16]byte, log logstore.Log, leader, leaderEpoch int32) *Partition {
	p := NewLeader(topic, index, topicID, log, leaderEpoch)
	p.leader = false
	p.leaderID = leader
	return p
}

// MakeLeader makes this broker the partition's leader at leaderEpoch
// (LeaderAndIsr). Leader epochs never decrease.
func (p *Partition) MakeLeader(leaderEpoch int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checkEpoch(leaderEpoch)
	p.leader, p.leaderEpoch = true, leaderEpoch
	p.wakeLocked()
}

// MakeFollower makes this broker a follower of leader at leaderEpoch.
func (p *Partition) MakeFollower(leader, leaderEpoch int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checkEpoch(leaderEpoch)
	p.leader, p.leaderID, p.leaderEpoch = false, leader, leaderEpoch
	p.wakeLocked()
}

func (p *Partition) checkEpoch(e int32) {
	if e < p.leaderEpoch {
		panic(fmt.Sprintf("%s-%d: leader epoch would move backwards from %d to %d", p.Topic, p.Index, p.leaderEpoch, e))
	}
}

// wakeLocked wakes waiting fetches and produces, which re-check
// leadership. The caller holds mu.
func (p *Partition) wakeLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leader
}

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leaderEpoch
}

// HighWatermark is the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.highWatermark
}

// LogStartOffset and LogEndOffset come from the log.
func (p *Partition) LogStartOffset() int64 { return p.log.LogStartOffset() }
func (p *Partition) LogEndOffset() int64   { return p.log.LogEndOffset() }

// AppendAsLeader appends validated batches, stamping the leader epoch.
// logAppendTime >= 0 applies LogAppendTime.
func (p *Partition) AppendAsLeader(batches []logstore.Batch, logAppendTime int64) (logstore.AppendInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	info, err := p.log.AppendAsLeader(batches, p.leaderEpoch, logAppendTime)
	if err != nil {
		return info, err
	}
	p.advanceHighWatermark(p.log.LogEndOffset())
	return info, nil
}

// advanceHighWatermark moves the HW forward and wakes waiting fetches. The
// caller holds mu.
func (p *Partition) advanceHighWatermark(hw int64) {
	if hw < p.highWatermark {
		panic(fmt.Sprintf("%s-%d: high watermark would move backwards from %d to %d", p.Topic, p.Index, p.highWatermark, hw))
	}
	if hw == p.highWatermark {
		return
	}
	p.highWatermark = hw
	close(p.changed)
	p.changed = make(chan struct{})
}

// Changed returns a channel closed at the next high-watermark change.
func (p *Partition) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// ReadInfo is what a consumer fetch needs besides the data.
type ReadInfo struct {
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
}

// Read returns batches from offset, bounded by the high watermark.
func (p *Partition) Read(offset int64, maxBytes int, minOneBatch bool) (logstore.ReadResult, ReadInfo, error) {
	hw := p.HighWatermark()
	info := ReadInfo{HighWatermark: hw, LogStartOffset: p.log.LogStartOffset(), LogEndOffset: p.log.LogEndOffset()}
	res, err := p.log.Read(offset, hw, maxBytes, minOneBatch)
	return res, info, err
}

// DeleteRecordsBefore advances the log start offset; it may not pass the HW.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, error) {
	hw := p.HighWatermark()
	if offset < 0 {
		offset = hw
	}
	if offset > hw {
		return 0, logstore.ErrOffsetOutOfRange
	}
	if start := p.log.LogStartOffset(); offset <= start {
		return start, nil // already gone: nothing to do
	}
	if err := p.log.DeleteRecordsBefore(offset); err != nil {
		return 0, err
	}
	return p.log.LogStartOffset(), nil
}

// CheckLeaderEpoch validates the current_leader_epoch a client sent with
// Fetch, ListOffsets or OffsetForLeaderEpoch (KIP-320). -1 means the
// client does not know it and skips the check. An older epoch means the
// client's metadata is stale (FENCED_LEADER_EPOCH); a newer one means
// this broker has not yet learned of a leader change (UNKNOWN_LEADER_EPOCH).
func (p *Partition) CheckLeaderEpoch(requested int32) error {
	if requested == -1 {
		return nil
	}
	switch e := p.LeaderEpoch(); {
	case requested < e:
		return kerr.FencedLeaderEpoch
	case requested > e:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}
