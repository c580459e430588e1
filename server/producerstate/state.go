package producerstate

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
)

// MaxCachedBatches is how many batches per producer are remembered for
// duplicate detection; it matches max.in.flight.requests.per.connection's
// ceiling for idempotent producers (5), so any retried batch is found.
const MaxCachedBatches = 5

// NoEpoch is RecordBatch.NO_PRODUCER_EPOCH.
const NoEpoch int16 = -1

// Batch is what the state needs from a record batch header.
type Batch struct {
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// LastOffsetDelta is the number of offsets the batch spans minus one;
	// the batch's last sequence is BaseSequence+LastOffsetDelta (wrapping).
	LastOffsetDelta int32
	MaxTimestamp    int64
}

// LastSequence is the sequence of the batch's last record, wrapping at
// MaxInt32 as Kafka's DefaultRecordBatch.incrementSequence does.
func (b Batch) LastSequence() int32 { return addSeq(b.BaseSequence, b.LastOffsetDelta) }

func addSeq(seq, delta int32) int32 {
	if seq > math.MaxInt32-delta {
		return delta - (math.MaxInt32 - seq) - 1
	}
	return seq + delta
}

// BatchMetadata is one remembered batch.
type BatchMetadata struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
	Timestamp               int64
}

// Producer is one producer id's entry.
type Producer struct {
	ID            int64
	Epoch         int16
	Batches       []BatchMetadata // oldest first, at most MaxCachedBatches
	LastTimestamp int64
}

// LastSeq is the last sequence written, -1 when none is cached.
func (p *Producer) LastSeq() int32 {
	if len(p.Batches) == 0 {
		return -1
	}
	return p.Batches[len(p.Batches)-1].LastSeq
}

// LastOffset is the last offset written, -1 when none is cached.
func (p *Producer) LastOffset() int64 {
	if len(p.Batches) == 0 {
		return -1
	}
	return p.Batches[len(p.Batches)-1].LastOffset
}

// State is one partition's producer table.
type State struct {
	producers map[int64]*Producer
}

// New returns an empty table.
func New() *State { return &State{producers: map[int64]*Producer{}} }

// Len is the number of tracked producers.
func (s *State) Len() int { return len(s.producers) }

// Producer returns the entry of id, or nil.
func (s *State) Producer(id int64) *Producer { return s.producers[id] }

// Producers calls fn for every entry, in no particular order.
func (s *State) Producers(fn func(*Producer)) {
	for _, p := range s.producers {
		fn(p)
	}
}

// Verdict is Check's answer.
type Verdict struct {
	// Duplicate is set when the batch was already appended; Original holds
	// its offsets then, and the batch must not be appended again.
	Duplicate bool
	Original  BatchMetadata
}

// Check validates a client's batch against the producer's entry, following
// Kafka's ProducerAppendInfo (checkProducerEpoch, checkSequence) and
// UnifiedLog's duplicate lookup:
//   - an older epoch than the entry's is INVALID_PRODUCER_EPOCH (2.7+, no
//     longer the fatal PRODUCER_FENCED);
//   - a batch equal in epoch and sequence range to a cached one is a
//     duplicate;
//   - a newer epoch must start at sequence 0, unless the producer is
//     unknown (KIP-360: its state may have been removed by retention or
//     DeleteRecords, so any sequence is accepted, and UNKNOWN_PRODUCER_ID is
//     not returned);
//   - within an epoch the sequence must follow the last one, else
//     OUT_OF_ORDER_SEQUENCE_NUMBER.
//
// Batches without a producer id are always accepted.
func (s *State) Check(b Batch) (Verdict, error) {
	if b.ProducerID < 0 {
		return Verdict{}, nil
	}
	p := s.producers[b.ProducerID]
	if p == nil {
		return Verdict{}, nil
	}
	if b.ProducerEpoch < p.Epoch {
		return Verdict{}, kerr.InvalidProducerEpoch
	}
	if b.ProducerEpoch == p.Epoch {
		last := b.LastSequence()
		for _, m := range p.Batches {
			if m.FirstSeq == b.BaseSequence && m.LastSeq == last {
				return Verdict{Duplicate: true, Original: m}, nil
			}
		}
	}
	if b.ProducerEpoch != p.Epoch {
		if b.BaseSequence != 0 && p.Epoch != NoEpoch {
			return Verdict{}, kerr.OutOfOrderSequenceNumber
		}
		return Verdict{}, nil
	}
	lastSeq := p.LastSeq()
	if lastSeq == -1 {
		// Every batch of this producer left the log: accept any sequence,
		// as Kafka does when the entry carries no sequence.
		return Verdict{}, nil
	}
	if !inSequence(lastSeq, b.BaseSequence) {
		return Verdict{}, kerr.OutOfOrderSequenceNumber
	}
	return Verdict{}, nil
}

func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// Update records a batch appended at [firstOffset, lastOffset]. A newer
// epoch drops the cached batches of the older one.
func (s *State) Update(b Batch, firstOffset, lastOffset int64) {
	if b.ProducerID < 0 {
		return
	}
	p := s.producers[b.ProducerID]
	if p == nil {
		p = &Producer{ID: b.ProducerID, Epoch: b.ProducerEpoch}
		s.producers[b.ProducerID] = p
	}
	if b.ProducerEpoch != p.Epoch {
		p.Epoch = b.ProducerEpoch
		p.Batches = p.Batches[:0]
	}
	if len(p.Batches) == MaxCachedBatches {
		copy(p.Batches, p.Batches[1:])
		p.Batches = p.Batches[:MaxCachedBatches-1]
	}
	p.Batches = append(p.Batches, BatchMetadata{
		FirstSeq:    b.BaseSequence,
		LastSeq:     b.LastSequence(),
		FirstOffset: firstOffset,
		LastOffset:  lastOffset,
		Timestamp:   b.MaxTimestamp,
	})
	p.LastTimestamp = max(p.LastTimestamp, b.MaxTimestamp)
}

// Evict removes producers whose last batch lies below logStartOffset, as
// Kafka's evictUnretainedProducers does after retention or DeleteRecords.
func (s *State) Evict(logStartOffset int64) {
	for id, p := range s.producers {
		if p.LastOffset() < logStartOffset {
			delete(s.producers, id)
		}
	}
}

// Expire removes producers idle since before cutoff (a timestamp in ms):
// producer.id.expiration.ms, which bounds the table.
func (s *State) Expire(cutoff int64) {
	for id, p := range s.producers {
		if p.LastTimestamp < cutoff {
			delete(s.producers, id)
		}
	}
}
