package producerstate

import (
	"bytes"
	"errors"
	"math"
	"os"
	"reflect"
	"testing"
)

// kafkaSnapshot is what Kafka 4.4's ProducerStateManager.writeSnapshot
// wrote for three producers (testdata/GenSnapshot.java): one with two
// batches, of which the snapshot keeps the last; one inside a transaction
// whose last batch's sequences wrap past MaxInt32; one with no batch.
var kafkaSnapshot = []Producer{
	{ID: 1000, Epoch: 3, LastTimestamp: 1700000000123, CoordinatorEpoch: -1, CurrentTxnFirstOffset: NoOffset,
		Batches: []BatchMetadata{{FirstSeq: 32, LastSeq: 41, FirstOffset: 132, LastOffset: 141, Timestamp: 1700000000123}}},
	{ID: 2000, Epoch: 0, LastTimestamp: 5, CoordinatorEpoch: 7, CurrentTxnFirstOffset: 150,
		Batches: []BatchMetadata{{FirstSeq: math.MaxInt32 - 1, LastSeq: 2, FirstOffset: 156, LastOffset: 160, Timestamp: 5}}},
	{ID: 3000, Epoch: 1, LastTimestamp: 77, CoordinatorEpoch: -1, CurrentTxnFirstOffset: NoOffset},
}

func TestSnapshotMatchesKafkaBytes(t *testing.T) {
	golden, err := os.ReadFile("testdata/kafka-4.4.snapshot")
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSnapshot(golden)
	if err != nil {
		t.Fatalf("decode Kafka's snapshot: %v", err)
	}
	if !reflect.DeepEqual(got, kafkaSnapshot) {
		t.Fatalf("decoded Kafka's snapshot as\n%+v\nwant\n%+v", got, kafkaSnapshot)
	}
	if enc := EncodeSnapshot(kafkaSnapshot); !bytes.Equal(enc, golden) {
		t.Fatalf("encoded\n%x\nKafka wrote\n%x", enc, golden)
	}
}

// A table built by Update survives a snapshot with each producer's last
// batch, which is all Kafka's format keeps.
func TestSnapshotRoundTrip(t *testing.T) {
	s := New()
	next := int64(0)
	for _, b := range []Batch{
		{ProducerID: 9, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 4, MaxTimestamp: 10},
		{ProducerID: 4, ProducerEpoch: 2, BaseSequence: math.MaxInt32, LastOffsetDelta: 1, MaxTimestamp: 11},
		{ProducerID: 9, ProducerEpoch: 0, BaseSequence: 5, LastOffsetDelta: 0, MaxTimestamp: 12},
		{ProducerID: 7, ProducerEpoch: 1, BaseSequence: 0, LastOffsetDelta: 2, MaxTimestamp: 13, Transactional: true},
	} {
		s.Update(b, next, next+int64(b.LastOffsetDelta))
		next += int64(b.LastOffsetDelta) + 1
	}
	got, err := DecodeSnapshot(EncodeSnapshot(s.Sorted()))
	if err != nil {
		t.Fatal(err)
	}
	want := s.Sorted()
	for i := range want {
		want[i].Batches = want[i].Batches[len(want[i].Batches)-1:]
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip\n%+v\nwant\n%+v", got, want)
	}
	if got[0].ID != 4 || got[0].Batches[0].FirstSeq != math.MaxInt32 || got[0].Batches[0].LastSeq != 0 {
		t.Fatalf("wrapped sequence lost: %+v", got[0])
	}
	if got[1].ID != 7 || got[1].CurrentTxnFirstOffset != 8 {
		t.Fatalf("ongoing transaction's first offset lost: %+v", got[1])
	}
	// Loaded back, the table goes on judging the producers' next batches.
	r := New()
	for _, p := range got {
		r.Load(p)
	}
	if v, err := r.Check(Batch{ProducerID: 9, ProducerEpoch: 0, BaseSequence: 5, LastOffsetDelta: 0}); err != nil || !v.Duplicate || v.Original.FirstOffset != 7 {
		t.Fatalf("retry of the last batch after load: %+v %v", v, err)
	}
	if _, err := r.Check(Batch{ProducerID: 9, ProducerEpoch: 0, BaseSequence: 6}); err != nil {
		t.Fatalf("next sequence after load: %v", err)
	}
}

func TestSnapshotCorruption(t *testing.T) {
	good := EncodeSnapshot(kafkaSnapshot)
	flipped := bytes.Clone(good)
	flipped[20] ^= 1
	version := bytes.Clone(good)
	version[1] = 2
	bogusDelta := EncodeSnapshot([]Producer{{ID: 1, Batches: []BatchMetadata{{LastOffset: 3, FirstOffset: -5}}}})
	for name, data := range map[string][]byte{
		"empty":          nil,
		"short header":   good[:7],
		"flipped bit":    flipped,
		"version 2":      version,
		"cut entry":      good[:len(good)-1],
		"trailing byte":  append(bytes.Clone(good), 0),
		"delta > offset": bogusDelta,
	} {
		if _, err := DecodeSnapshot(data); !errors.Is(err, ErrCorruptSnapshot) {
			t.Errorf("%s: %v, want ErrCorruptSnapshot", name, err)
		}
	}
	if got, err := DecodeSnapshot(EncodeSnapshot(nil)); err != nil || len(got) != 0 {
		t.Fatalf("empty table: %v %v", got, err)
	}
}

// FuzzDecodeSnapshot: no input panics the decoder, and whatever it
// accepts encodes back to a snapshot that decodes to the same table.
func FuzzDecodeSnapshot(f *testing.F) {
	golden, err := os.ReadFile("testdata/kafka-4.4.snapshot")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(EncodeSnapshot(nil))
	f.Add(golden[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		again, err := DecodeSnapshot(EncodeSnapshot(got))
		if err != nil {
			t.Fatalf("re-encoded snapshot refused: %v", err)
		}
		if !reflect.DeepEqual(got, again) && !(len(got) == 0 && len(again) == 0) {
			t.Fatalf("round trip changed the table:\n%+v\n%+v", got, again)
		}
	})
}
