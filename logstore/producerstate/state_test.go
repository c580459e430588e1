package producerstate

import (
	"errors"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// appendBatch checks and, when new, records a batch the way the produce
// path does, returning the offset the client is answered with.
func appendBatch(t *testing.T, s *State, next *int64, b Batch) (int64, error) {
	t.Helper()
	v, err := s.Check(b)
	if err != nil {
		return -1, err
	}
	if v.Duplicate {
		return v.Original.FirstOffset, nil
	}
	first := *next
	*next += int64(b.LastOffsetDelta) + 1
	s.Update(b, first, *next-1)
	return first, nil
}

func TestSequenceRules(t *testing.T) {
	s := New()
	var next int64
	b := func(epoch int16, seq, delta int32) Batch {
		return Batch{ProducerID: 7, ProducerEpoch: epoch, BaseSequence: seq, LastOffsetDelta: delta, MaxTimestamp: 1}
	}
	steps := []struct {
		name    string
		batch   Batch
		want    int64
		wantErr error
	}{
		{"first batch of a new producer", b(0, 0, 2), 0, nil},
		{"next in sequence", b(0, 3, 0), 3, nil},
		{"retry of the first batch is a duplicate", b(0, 0, 2), 0, nil},
		{"retry of the second batch is a duplicate", b(0, 3, 0), 3, nil},
		{"gap", b(0, 5, 0), -1, kerr.OutOfOrderSequenceNumber},
		{"overlapping but not equal range", b(0, 1, 1), -1, kerr.OutOfOrderSequenceNumber},
		{"in sequence after refusals", b(0, 4, 1), 4, nil},
		{"older epoch is fenced", b(-1, 0, 0), -1, kerr.InvalidProducerEpoch},
		{"new epoch must start at 0", b(1, 6, 0), -1, kerr.OutOfOrderSequenceNumber},
		{"new epoch at 0", b(1, 0, 0), 6, nil},
		{"the old epoch is now fenced", b(0, 6, 0), -1, kerr.InvalidProducerEpoch},
	}
	for _, st := range steps {
		got, err := appendBatch(t, s, &next, st.batch)
		if !errors.Is(err, st.wantErr) || (err == nil && got != st.want) {
			t.Fatalf("%s: got offset %d err %v, want %d err %v", st.name, got, err, st.want, st.wantErr)
		}
	}
	if next != 7 {
		t.Fatalf("log end offset %d, want 7: a duplicate or refused batch was appended", next)
	}
}

func TestUnknownProducerAcceptsAnySequence(t *testing.T) {
	s := New()
	if _, err := s.Check(Batch{ProducerID: 1, ProducerEpoch: 3, BaseSequence: 42}); err != nil {
		t.Fatalf("KIP-360: an unknown producer's first batch must be accepted, got %v", err)
	}
	if _, err := s.Check(Batch{ProducerID: -1, BaseSequence: -1}); err != nil {
		t.Fatalf("a non-idempotent batch must be accepted, got %v", err)
	}
}

func TestOnlyFiveBatchesAreRemembered(t *testing.T) {
	s := New()
	var next int64
	for seq := int32(0); seq < 7; seq++ {
		if _, err := appendBatch(t, s, &next, Batch{ProducerID: 1, BaseSequence: seq}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.Producer(1).Batches); n != MaxCachedBatches {
		t.Fatalf("%d batches cached, want %d", n, MaxCachedBatches)
	}
	for seq := int32(2); seq < 7; seq++ {
		v, err := s.Check(Batch{ProducerID: 1, BaseSequence: seq})
		if err != nil || !v.Duplicate || v.Original.FirstOffset != int64(seq) {
			t.Fatalf("seq %d: verdict %+v err %v, want duplicate at offset %d", seq, v, err, seq)
		}
	}
	if _, err := s.Check(Batch{ProducerID: 1, BaseSequence: 1}); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("a batch older than the cache: got %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
}

func TestSequenceWraps(t *testing.T) {
	s := New()
	var next int64
	if _, err := appendBatch(t, s, &next, Batch{ProducerID: 1, BaseSequence: math.MaxInt32 - 1, LastOffsetDelta: 1}); err != nil {
		t.Fatal(err)
	}
	if got := s.Producer(1).LastSeq(); got != math.MaxInt32 {
		t.Fatalf("last seq %d", got)
	}
	if _, err := appendBatch(t, s, &next, Batch{ProducerID: 1, BaseSequence: 0, LastOffsetDelta: 2}); err != nil {
		t.Fatalf("sequence must wrap from MaxInt32 to 0: %v", err)
	}
	if got := (Batch{BaseSequence: math.MaxInt32, LastOffsetDelta: 2}).LastSequence(); got != 1 {
		t.Fatalf("wrapped last sequence %d, want 1", got)
	}
}

func TestEvictAndExpire(t *testing.T) {
	s := New()
	s.Update(Batch{ProducerID: 1, MaxTimestamp: 100}, 0, 4)
	s.Update(Batch{ProducerID: 2, MaxTimestamp: 200}, 5, 9)
	s.Evict(5)
	if s.Producer(1) != nil || s.Producer(2) == nil {
		t.Fatal("Evict(5) must drop only the producer whose last offset is 4")
	}
	s.Expire(201)
	if s.Len() != 0 {
		t.Fatal("Expire must drop producers idle since before the cutoff")
	}
	// After eviction the producer is unknown again: any sequence goes.
	if _, err := s.Check(Batch{ProducerID: 2, BaseSequence: 99}); err != nil {
		t.Fatal(err)
	}
}
