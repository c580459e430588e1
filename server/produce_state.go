package server

import (
	"sync"
	"time"

	"github.com/kbroker/kbroker/logstore"
	"github.com/kbroker/kbroker/replica"
	"github.com/kbroker/kbroker/server/producerstate"
)

// producerIDExpiration is producer.id.expiration.ms (Kafka's default, one
// day): producers idle longer are forgotten, which bounds each partition's
// producer table and how far back the table is rebuilt from the log.
const producerIDExpiration = 24 * time.Hour

// dataPath is the produce/fetch path's state: each partition's producer
// table and append lock, the producer-id allocator and the fetch sessions.
type dataPath struct {
	b *Broker

	producerIDs *producerIDManager
	sessions    *fetchSessionCache
}

func newDataPath(b *Broker) *dataPath {
	d := &dataPath{
		b:        b,
		sessions: newFetchSessionCache(defaultFetchSessionSlots, b.logger),
	}
	d.producerIDs = &producerIDManager{claim: b.claimProducerIDBlock}
	return d
}

// partitionData is what the data path keeps per hosted partition.
type partitionData struct {
	// appendMu is held across the producer-state check, the log append and
	// the state update, which makes sequence checks atomic with appends.
	appendMu   sync.Mutex
	producers  *producerstate.State // nil until loaded, under appendMu
	lastExpire time.Time
	// builtEpoch is the leader epoch the table was built in: batches a
	// follower replicated never went through it, so a replica that becomes
	// leader again rebuilds it from its log.
	builtEpoch int32
}

// partData returns p's state, creating it on first use. It hangs off the
// partition itself, so it goes away with the partition.
func (d *dataPath) partData(p *replica.Partition) *partitionData {
	return p.Attached(func() any { return &partitionData{} }).(*partitionData)
}

// producerState returns p's producer table, rebuilding it from the log on
// first use: the headers of every batch written within the producer
// expiration window are replayed, so that a batch retried across a broker
// restart is still recognised as a duplicate. The caller holds appendMu.
func (pd *partitionData) producerState(p *replica.Partition, now time.Time) (*producerstate.State, error) {
	if pd.producers != nil && pd.builtEpoch != p.LeaderEpoch() {
		pd.producers = nil
	}
	if pd.producers != nil {
		if now.Sub(pd.lastExpire) > time.Minute {
			pd.producers.Expire(now.Add(-producerIDExpiration).UnixMilli())
			pd.producers.Evict(p.LogStartOffset())
			pd.lastExpire = now
		}
		return pd.producers, nil
	}
	s, err := rebuildProducerState(p.Log(), now)
	if err != nil {
		return nil, err
	}
	pd.producers, pd.lastExpire, pd.builtEpoch = s, now, p.LeaderEpoch()
	return s, nil
}

// rebuildChunk is how much log is read per step of a rebuild.
const rebuildChunk = 1 << 20

// rebuildProducerState replays the batch headers of the log's tail. Kafka
// loads a snapshot and replays from it; we have no snapshots yet, and
// start from the first record inside the expiration window instead (found
// with the time index), since older producers would be expired anyway.
func rebuildProducerState(l logstore.Log, now time.Time) (*producerstate.State, error) {
	s := producerstate.New()
	from, _, found, err := l.OffsetForTimestamp(now.Add(-producerIDExpiration).UnixMilli())
	if err != nil {
		return nil, err
	}
	if !found {
		return s, nil
	}
	end := l.LogEndOffset()
	for from < end {
		rr, err := l.Read(from, end, rebuildChunk, true)
		if err != nil {
			return nil, err
		}
		raw, err := rr.Bytes()
		if err != nil {
			return nil, err
		}
		batches, err := logstore.ParseBatches(raw)
		if err != nil {
			return nil, err
		}
		if len(batches) == 0 {
			break
		}
		for _, bt := range batches {
			h := &bt.Header
			if h.ProducerID >= 0 && !h.IsControl() {
				s.Update(producerBatch(h), h.BaseOffset, h.LastOffset())
			}
			from = h.LastOffset() + 1
		}
	}
	return s, nil
}

// producerBatch is the part of a header the producer table needs.
func producerBatch(h *logstore.BatchHeader) producerstate.Batch {
	return producerstate.Batch{
		ProducerID:      h.ProducerID,
		ProducerEpoch:   h.ProducerEpoch,
		BaseSequence:    h.BaseSequence,
		LastOffsetDelta: h.LastOffsetDelta,
		MaxTimestamp:    h.MaxTimestamp,
	}
}

// afterDeleteRecords forgets producers whose every batch is now below the
// log start offset (Kafka's evictUnretainedProducers), so that their next
// batch is accepted with any sequence instead of being judged against
// state the log no longer backs.
func (d *dataPath) afterDeleteRecords(p *replica.Partition) {
	pd := d.partData(p)
	pd.appendMu.Lock()
	defer pd.appendMu.Unlock()
	if pd.producers != nil {
		pd.producers.Evict(p.LogStartOffset())
	}
}
