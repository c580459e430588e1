package group

import (
	"context"
	"sync"
)

// MemOffsetsLog is an in-memory OffsetsLog for the coordinator's tests.
// FailAppends makes Append fail, to exercise error paths.
type MemOffsetsLog struct {
	mu          sync.Mutex
	records     map[int32][]KV
	FailAppends error
}

// NewMemOffsetsLog returns an empty log.
func NewMemOffsetsLog() *MemOffsetsLog {
	return &MemOffsetsLog{records: make(map[int32][]KV)}
}

// Append stores copies of records.
func (l *MemOffsetsLog) Append(ctx context.Context, partition int32, records []KV) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.FailAppends != nil {
		return l.FailAppends
	}
	for _, r := range records {
		kv := KV{Key: append([]byte(nil), r.Key...)}
		if r.Value != nil {
			kv.Value = append([]byte{}, r.Value...)
		}
		l.records[partition] = append(l.records[partition], kv)
	}
	return nil
}

// Replay calls fn for each record of partition in append order.
func (l *MemOffsetsLog) Replay(partition int32, fn func(key, value []byte) error) error {
	l.mu.Lock()
	recs := append([]KV(nil), l.records[partition]...)
	l.mu.Unlock()
	for _, r := range recs {
		if err := fn(r.Key, r.Value); err != nil {
			return err
		}
	}
	return nil
}

// Records returns a copy of partition's records.
func (l *MemOffsetsLog) Records(partition int32) []KV {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]KV(nil), l.records[partition]...)
}
