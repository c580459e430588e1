package server

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func sessParts(topic string, n int) []*sessionPartition {
	var out []*sessionPartition
	for i := 0; i < n; i++ {
		out = append(out, &sessionPartition{key: sessionKey{topic: topic, partition: int32(i)}, fetchPosition: fetchPosition{partitionMaxBytes: 1 << 20}})
	}
	return out
}

func TestFetchSessionEpochs(t *testing.T) {
	c := newFetchSessionCache(10, slog.Default())
	now := time.Unix(1000, 0)
	s := c.create(sessParts("a", 2), false, now)
	if s == nil || s.id == 0 {
		t.Fatal("a full fetch with partitions must get a session")
	}
	if _, err := c.get(s.id+1, 1, false, now); !errors.Is(err, kerr.FetchSessionIDNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := c.get(s.id, 2, false, now); !errors.Is(err, kerr.InvalidFetchSessionEpoch) {
		t.Fatalf("epoch 2 before 1: %v", err)
	}
	for epoch := int32(1); epoch <= 3; epoch++ {
		if _, err := c.get(s.id, epoch, false, now); err != nil {
			t.Fatalf("epoch %d: %v", epoch, err)
		}
	}
	if _, err := c.get(s.id, 3, false, now); !errors.Is(err, kerr.InvalidFetchSessionEpoch) {
		t.Fatalf("a replayed epoch must be refused: %v", err)
	}
	if _, err := c.get(s.id, 4, true, now); !errors.Is(err, kerr.FetchSessionTopicIDError) {
		t.Fatalf("switching to topic ids within a session: %v", err)
	}
	c.remove(s.id)
	if _, err := c.get(s.id, 4, false, now); !errors.Is(err, kerr.FetchSessionIDNotFound) {
		t.Fatalf("removed session: %v", err)
	}
	if c.create(nil, false, now) != nil {
		t.Fatal("an empty full fetch must not take a slot")
	}
}

func TestFetchSessionUpdateAndForget(t *testing.T) {
	c := newFetchSessionCache(10, slog.Default())
	s := c.create(sessParts("a", 3), false, time.Unix(0, 0))
	// A follower's change of last fetched epoch (it appended a newer
	// epoch's records) and of log start offset count as much as its
	// offset: a kept stale epoch made the next fetches diverge.
	changed := &sessionPartition{key: sessionKey{topic: "a", partition: 1}, fetchPosition: fetchPosition{fetchOffset: 42, partitionMaxBytes: 7, currentLeaderEpoch: 3, followerLogStartOffset: 9, lastFetchedEpoch: 3}}
	added := &sessionPartition{key: sessionKey{topic: "b", partition: 0}, fetchPosition: fetchPosition{fetchOffset: 5}}
	s.update([]*sessionPartition{changed, added}, []sessionKey{{topic: "a", partition: 0}})
	var keys []sessionKey
	for _, p := range s.parts {
		keys = append(keys, p.key)
	}
	want := []sessionKey{{topic: "a", partition: 1}, {topic: "a", partition: 2}, {topic: "b", partition: 0}}
	if len(keys) != len(want) {
		t.Fatalf("partitions %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("partitions %v, want %v", keys, want)
		}
	}
	if p := s.byKey[sessionKey{topic: "a", partition: 1}]; p.fetchPosition != changed.fetchPosition {
		t.Fatalf("changed partition not updated: %+v", p)
	}
	s.rotate(map[sessionKey]bool{{topic: "a", partition: 1}: true})
	if s.parts[len(s.parts)-1].key != (sessionKey{topic: "a", partition: 1}) {
		t.Fatal("a partition that returned data must move to the end")
	}
}

func TestFetchSessionCacheIsBounded(t *testing.T) {
	c := newFetchSessionCache(2, slog.Default())
	t0 := time.Unix(0, 0)
	a := c.create(sessParts("a", 5), false, t0)
	b := c.create(sessParts("b", 1), false, t0)
	if a == nil || b == nil {
		t.Fatal("two slots, two sessions")
	}
	if s := c.create(sessParts("c", 1), false, t0.Add(time.Second)); s != nil {
		t.Fatal("a session no larger than the smallest must not evict a fresh one")
	}
	big := c.create(sessParts("d", 3), false, t0.Add(time.Second))
	if big == nil || c.len() != 2 {
		t.Fatal("a larger session evicts the smallest")
	}
	if _, err := c.get(b.id, 1, false, t0); !errors.Is(err, kerr.FetchSessionIDNotFound) {
		t.Fatal("the smallest session must be the one evicted")
	}
	later := t0.Add(fetchSessionEvictAfter + time.Minute)
	if _, err := c.get(big.id, 1, false, later); err != nil {
		t.Fatal(err)
	}
	if s := c.create(sessParts("e", 1), false, later); s == nil {
		t.Fatal("a stale session must give up its slot")
	}
	if _, err := c.get(a.id, 1, false, later); !errors.Is(err, kerr.FetchSessionIDNotFound) {
		t.Fatal("the stale session must be the one evicted")
	}
}
