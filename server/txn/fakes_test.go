package txn

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { panicOnInvariant = true }

// MemLog is an in-memory Log. FailAppends makes Append fail; Block, when
// set, is called inside Append before the records are stored.
type MemLog struct {
	mu          sync.Mutex
	records     map[int32][]KV
	FailAppends error
	Block       func(partition int32)
}

func NewMemLog() *MemLog { return &MemLog{records: make(map[int32][]KV)} }

func (l *MemLog) Append(ctx context.Context, partition int32, records []KV) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	block, fail := l.Block, l.FailAppends
	l.mu.Unlock()
	if block != nil {
		block(partition)
	}
	if fail != nil {
		return fail
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range records {
		kv := KV{Key: append([]byte(nil), r.Key...)}
		if r.Value != nil {
			kv.Value = append([]byte{}, r.Value...)
		}
		l.records[partition] = append(l.records[partition], kv)
	}
	return nil
}

func (l *MemLog) Replay(partition int32, fn func(key, value []byte) error) error {
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

func (l *MemLog) setFail(err error) {
	l.mu.Lock()
	l.FailAppends = err
	l.mu.Unlock()
}

func (l *MemLog) Records(partition int32) []KV {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]KV(nil), l.records[partition]...)
}

// lastValue decodes the last record of id, nil for a tombstone.
func (l *MemLog) lastValue(t *testing.T, partition int32, id string) *kmsg.TxnMetadataValue {
	t.Helper()
	var last *kmsg.TxnMetadataValue
	found := false
	for _, r := range l.Records(partition) {
		k, err := decodeTxnKey(r.Key)
		if err != nil || k != id {
			continue
		}
		found = true
		if r.Value == nil {
			last = nil
			continue
		}
		v := new(kmsg.TxnMetadataValue)
		if err := v.ReadFrom(r.Value); err != nil {
			t.Fatal(err)
		}
		last = v
	}
	if !found {
		t.Fatalf("no record of %q in partition %d", id, partition)
	}
	return last
}

// FakeMarkers records every WriteMarker call and answers with Fail's
// errors (consumed one call at a time) or success.
type FakeMarkers struct {
	mu    sync.Mutex
	Calls []Marker
	// Fail, if not empty, is the answer of the next calls, in order.
	Fail []map[TopicPartition]error
}

func (f *FakeMarkers) WriteMarker(ctx context.Context, m Marker) map[TopicPartition]error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m.Partitions = append([]TopicPartition(nil), m.Partitions...)
	f.Calls = append(f.Calls, m)
	if len(f.Fail) > 0 {
		errs := f.Fail[0]
		f.Fail = f.Fail[1:]
		out := make(map[TopicPartition]error)
		for _, tp := range m.Partitions {
			if err, ok := errs[tp]; ok {
				out[tp] = err
			}
		}
		return out
	}
	return nil
}

func (f *FakeMarkers) calls() []Marker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Marker(nil), f.Calls...)
}

func (f *FakeMarkers) failNext(errs ...map[TopicPartition]error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Fail = append(f.Fail, errs...)
}

// SeqIDs hands out 1000, 1001, ...; Err makes Generate fail.
type SeqIDs struct {
	mu   sync.Mutex
	next int64
	Err  error
}

func (s *SeqIDs) Generate() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Err != nil {
		return -1, s.Err
	}
	if s.next == 0 {
		s.next = 1000
	}
	id := s.next
	s.next++
	return id, nil
}

var errTransport = errors.New("connection reset")

var t0 = time.Date(2024, 10, 1, 12, 0, 0, 0, time.UTC)
