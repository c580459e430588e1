package fetcher

import (
	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
)

// hostedReplica presents a hosted partition to the fetcher (replica.Partition
// names its identity with fields; the fetcher asks through methods).
type hostedReplica struct{ p *replica.Partition }

var _ Partition = hostedReplica{}

func (f hostedReplica) Topic() string             { return f.p.Topic }
func (f hostedReplica) Index() int32              { return f.p.Index }
func (f hostedReplica) TopicID() [16]byte         { return f.p.TopicID }
func (f hostedReplica) CurrentLeaderEpoch() int32 { return f.p.CurrentLeaderEpoch() }
func (f hostedReplica) LogStartOffset() int64     { return f.p.LogStartOffset() }
func (f hostedReplica) LogEndOffset() int64       { return f.p.LogEndOffset() }
func (f hostedReplica) HighWatermark() int64      { return f.p.HighWatermark() }

func (f hostedReplica) LeaderEpochEntries() []logstore.EpochEntry {
	return f.p.Log().LeaderEpochEntries()
}

func (f hostedReplica) AppendAsFollower(batches []logstore.Batch) (logstore.AppendInfo, error) {
	return f.p.AppendAsFollower(batches)
}

func (f hostedReplica) TruncateTo(offset int64) error { return f.p.TruncateTo(offset) }

func (f hostedReplica) TruncateFullyAndStartAt(offset int64) error {
	return f.p.TruncateFullyAndStartAt(offset)
}

// SetLeaderHighWatermark follows the leader's log start offset (retention
// and DeleteRecords on the leader reach the followers this way) and HW.
func (f hostedReplica) SetLeaderHighWatermark(hw, leaderLogStartOffset int64) {
	if leaderLogStartOffset > f.p.LogStartOffset() && leaderLogStartOffset <= f.p.LogEndOffset() {
		if err := f.p.Log().DeleteRecordsBefore(leaderLogStartOffset); err != nil {
			return
		}
	}
	f.p.SetLeaderHighWatermark(hw)
}

var _ replica.Fetchers = (*Manager)(nil)

// Follow starts (or keeps) fetching p from its leader.
func (m *Manager) Follow(leaderID int32, leaderAddr string, p *replica.Partition) {
	m.AddPartitions(BrokerEndpoint{ID: leaderID, Addr: leaderAddr}, hostedReplica{p})
}

// Unfollow stops fetching the partitions.
func (m *Manager) Unfollow(tps ...replica.TopicPartition) { m.RemovePartitions(tps...) }
