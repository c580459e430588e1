package group

import (
	"context"
	"sync"
)

// MemOffsetsLog is an in-memory OffsetsLog for the coordinator's tests: a
// list of batches per partition, numbered as a log numbers them (a marker
// takes one offset). FailAppends makes the appends fail, to exercise error
// paths; Guards lists the verification guard of each transactional append.
type MemOffsetsLog struct {
	mu          sync.Mutex
	batches     map[int32][]ReplayedBatch
	FailAppends error
	Guards      []VerificationGuard
}

// NewMemOffsetsLog returns an empty log.
func NewMemOffsetsLog() *MemOffsetsLog {
	return &MemOffsetsLog{batches: make(map[int32][]ReplayedBatch)}
}

// Append stores copies of records as one batch.
func (l *MemOffsetsLog) Append(ctx context.Context, partition int32, records []KV) (int64, error) {
	return l.add(ctx, partition, ReplayedBatch{ProducerID: -1, Records: records})
}

// AppendTransactional stores copies of records as one transactional batch.
func (l *MemOffsetsLog) AppendTransactional(ctx context.Context, partition int32, producerID int64, _ int16, guard VerificationGuard, records []KV) (int64, error) {
	l.mu.Lock()
	l.Guards = append(l.Guards, guard)
	l.mu.Unlock()
	return l.add(ctx, partition, ReplayedBatch{ProducerID: producerID, Transactional: true, Records: records})
}

// WriteMarker appends a transaction marker, as the broker does for
// WriteTxnMarkers before it calls CompleteTransaction.
func (l *MemOffsetsLog) WriteMarker(partition int32, producerID int64, commit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.push(partition, ReplayedBatch{ProducerID: producerID, Transactional: true, Control: true, Commit: commit})
}

func (l *MemOffsetsLog) add(ctx context.Context, partition int32, b ReplayedBatch) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.FailAppends != nil {
		return 0, l.FailAppends
	}
	recs := make([]KV, len(b.Records))
	for i, r := range b.Records {
		recs[i] = KV{Key: append([]byte(nil), r.Key...)}
		if r.Value != nil {
			recs[i].Value = append([]byte{}, r.Value...)
		}
	}
	b.Records = recs
	return l.push(partition, b), nil
}

// push appends b at the log end and returns its base offset; l.mu is held.
func (l *MemOffsetsLog) push(partition int32, b ReplayedBatch) int64 {
	bs := l.batches[partition]
	b.BaseOffset = 0
	if n := len(bs); n > 0 {
		b.BaseOffset = bs[n-1].BaseOffset + int64(max(1, len(bs[n-1].Records)))
	}
	l.batches[partition] = append(bs, b)
	return b.BaseOffset
}

// Replay calls fn for each batch of partition in append order.
func (l *MemOffsetsLog) Replay(partition int32, fn func(ReplayedBatch) error) error {
	l.mu.Lock()
	bs := append([]ReplayedBatch(nil), l.batches[partition]...)
	l.mu.Unlock()
	for _, b := range bs {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// Records returns a copy of partition's records, markers left out.
func (l *MemOffsetsLog) Records(partition int32) []KV {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []KV
	for _, b := range l.batches[partition] {
		out = append(out, b.Records...)
	}
	return out
}

// Batches returns partition's batches.
func (l *MemOffsetsLog) Batches(partition int32) []ReplayedBatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ReplayedBatch(nil), l.batches[partition]...)
}
