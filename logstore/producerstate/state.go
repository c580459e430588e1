package producerstate

import (
	"cmp"
	"math"
	"slices"

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
	// Transactional marks a batch of a transaction; Control a
	// transaction marker (a control batch), which ends the producer's
	// transaction. For a marker, Abort and CoordinatorEpoch are its
	// record's (Kafka's EndTransactionMarker).
	Transactional    bool
	Control          bool
	Abort            bool
	CoordinatorEpoch int32
}

// Origin is who wrote a leader's batch, which decides how much of it is
// checked (Kafka's AppendOrigin): a client's batch fully; a coordinator's
// (transactional offset commits, transaction markers) for its epoch only,
// since its sequence numbers mean nothing.
type Origin int8

const (
	OriginClient Origin = iota
	OriginCoordinator
)

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

// NoOffset marks an absent offset (no ongoing transaction), as Kafka's
// snapshot writes it.
const NoOffset int64 = -1

// Producer is one producer id's entry.
type Producer struct {
	ID            int64
	Epoch         int16
	Batches       []BatchMetadata // oldest first, at most MaxCachedBatches
	LastTimestamp int64
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote this producer's last marker, -1 when none did.
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's ongoing
	// transaction, NoOffset when there is none.
	CurrentTxnFirstOffset int64
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

// State is one partition's producer table, with the transactions in it:
// the ongoing ones by first offset and the completed ones whose marker
// may not be replicated yet (txn.go).
type State struct {
	producers    map[int64]*Producer
	ongoing      []ongoingTxn
	unreplicated []CompletedTxn
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

// Sorted returns copies of every entry by ascending producer id: what a
// snapshot writes and DescribeProducers shows, taken under the caller's
// lock and used after it.
func (s *State) Sorted() []Producer {
	out := make([]Producer, 0, len(s.producers))
	for _, p := range s.producers {
		c := *p
		c.Batches = append([]BatchMetadata(nil), p.Batches...)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Producer) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Clear forgets every producer and transaction (a truncation about to
// reload).
func (s *State) Clear() {
	clear(s.producers)
	s.ongoing = s.ongoing[:0]
	s.unreplicated = s.unreplicated[:0]
}

// Load puts an entry read from a snapshot into the table, replacing any
// entry of the same id; its ongoing transaction, if any, comes with it
// (Kafka's loadProducerEntry).
func (s *State) Load(p Producer) {
	c := p
	c.Batches = append([]BatchMetadata(nil), p.Batches...)
	if old := s.producers[p.ID]; old != nil {
		s.removeOngoing(old.ID)
	}
	s.producers[p.ID] = &c
	if c.CurrentTxnFirstOffset != NoOffset {
		s.addOngoing(c.ID, c.CurrentTxnFirstOffset)
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
func (s *State) Check(b Batch) (Verdict, error) { return s.CheckFrom(b, OriginClient) }

// CheckFrom is Check for a batch of origin, following Kafka's
// ProducerAppendInfo and UnifiedLog.analyzeAndValidateProducerState:
//   - a coordinator's batch is checked for its epoch only: no duplicate
//     lookup and no sequence (a group coordinator's transactional offset
//     commits all start at sequence 0);
//   - a data batch from a producer inside a transaction must be
//     transactional (INVALID_TXN_STATE), whatever its origin;
//   - a marker (control batch) is checked for its producer epoch
//     (INVALID_PRODUCER_EPOCH) and its coordinator epoch: one older than
//     the last marker's is a zombie coordinator's
//     (TRANSACTION_COORDINATOR_FENCED), as in appendEndTxnMarker.
func (s *State) CheckFrom(b Batch, origin Origin) (Verdict, error) {
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
	if b.Control {
		if b.CoordinatorEpoch < p.CoordinatorEpoch {
			return Verdict{}, kerr.TransactionCoordinatorFenced
		}
		return Verdict{}, nil
	}
	if origin == OriginCoordinator {
		return Verdict{}, checkTxnState(p, b)
	}
	if b.ProducerEpoch == p.Epoch {
		last := b.LastSequence()
		for _, m := range p.Batches {
			if m.FirstSeq == b.BaseSequence && m.LastSeq == last {
				return Verdict{Duplicate: true, Original: m}, nil
			}
		}
	}
	if err := checkSequence(p, b); err != nil {
		return Verdict{}, err
	}
	return Verdict{}, checkTxnState(p, b)
}

func checkSequence(p *Producer, b Batch) error {
	if b.ProducerEpoch != p.Epoch {
		if b.BaseSequence != 0 && p.Epoch != NoEpoch {
			return kerr.OutOfOrderSequenceNumber
		}
		return nil
	}
	lastSeq := p.LastSeq()
	if lastSeq == -1 {
		// Every batch of this producer left the log: accept any sequence,
		// as Kafka does when the entry carries no sequence.
		return nil
	}
	if !inSequence(lastSeq, b.BaseSequence) {
		return kerr.OutOfOrderSequenceNumber
	}
	return nil
}

// checkTxnState refuses a non-transactional batch in the middle of the
// producer's transaction (ProducerAppendInfo.appendDataBatch).
func checkTxnState(p *Producer, b Batch) error {
	if p.CurrentTxnFirstOffset != NoOffset && !b.Transactional {
		return kerr.InvalidTxnState
	}
	return nil
}

func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// Update records a batch appended at [firstOffset, lastOffset], by a
// leader or replicated from one. A newer epoch drops the cached batches of
// the older one. A transaction marker only moves the epoch, takes the
// marker's coordinator epoch and ends the producer's transaction: it has
// no sequence to remember. When it ends a transaction that holds data,
// Update returns it as completed (ok), and the transaction stays unstable
// until the high watermark passes the marker (OnHighWatermark); a marker
// of a transaction without data completes nothing, as in Kafka's
// appendEndTxnMarker.
func (s *State) Update(b Batch, firstOffset, lastOffset int64) (completed CompletedTxn, ok bool) {
	if b.ProducerID < 0 {
		return CompletedTxn{}, false
	}
	p := s.producers[b.ProducerID]
	if p == nil {
		p = &Producer{ID: b.ProducerID, Epoch: b.ProducerEpoch, CoordinatorEpoch: -1, CurrentTxnFirstOffset: NoOffset}
		s.producers[b.ProducerID] = p
	}
	if b.ProducerEpoch != p.Epoch {
		p.Epoch = b.ProducerEpoch
		p.Batches = p.Batches[:0]
	}
	if b.Control {
		completed, ok = s.endTxn(p, b, firstOffset)
		p.CoordinatorEpoch = b.CoordinatorEpoch
		p.LastTimestamp = max(p.LastTimestamp, b.MaxTimestamp)
		return completed, ok
	}
	if b.Transactional && p.CurrentTxnFirstOffset == NoOffset {
		p.CurrentTxnFirstOffset = firstOffset
		s.addOngoing(p.ID, firstOffset)
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
	return CompletedTxn{}, false
}

// Evict removes producers whose last batch lies below logStartOffset, as
// Kafka's evictUnretainedProducers does after retention or DeleteRecords,
// and completed transactions whose marker is gone with them
// (onLogStartOffsetIncremented). An entry a transaction marker left
// without batches (the marker bumped the epoch) stays until it expires:
// it holds the producer and coordinator epochs that fence zombies.
func (s *State) Evict(logStartOffset int64) {
	for id, p := range s.producers {
		if len(p.Batches) == 0 && p.CoordinatorEpoch >= 0 {
			continue
		}
		if p.LastOffset() < logStartOffset {
			s.removeOngoing(id)
			delete(s.producers, id)
		}
	}
	s.OnHighWatermark(logStartOffset)
}

// Expire removes producers idle since before cutoff (a timestamp in ms):
// producer.id.expiration.ms, which bounds the table. A producer inside a
// transaction stays, as in Kafka, since its transaction still needs it.
func (s *State) Expire(cutoff int64) {
	for id, p := range s.producers {
		if p.LastTimestamp < cutoff && p.CurrentTxnFirstOffset == NoOffset {
			delete(s.producers, id)
		}
	}
}
