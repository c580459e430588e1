package server

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Fetch sessions (KIP-227). A client that opens a session sends its whole
// partition list once (a full fetch, epoch 0); later fetches (epoch 1, 2,
// ...) carry only the partitions whose fetch position changed, plus the
// ones to forget, and the answer carries only partitions with news: data,
// an error, or a changed high watermark, log start or last stable offset.

const (
	// defaultFetchSessionSlots is max.incremental.fetch.session.cache.slots.
	defaultFetchSessionSlots = 1000
	// fetchSessionEvictAfter is how long a session must be unused before a
	// new one may take its slot (Kafka's min.incremental.fetch.session.eviction.ms
	// is internal and 120 s).
	fetchSessionEvictAfter = 120 * time.Second

	finalEpoch   int32 = -1
	initialEpoch int32 = 0
)

// sessionKey names a partition within a session: by topic id for Fetch
// v13+, by name before.
type sessionKey struct {
	topicID   [16]byte
	topic     string
	partition int32
}

// fetchPosition is what a fetch asks of one partition.
type fetchPosition struct {
	fetchOffset        int64
	partitionMaxBytes  int32
	currentLeaderEpoch int32
	// What a follower's fetch carries besides its position.
	followerLogStartOffset int64
	lastFetchedEpoch       int32
}

// sessionPartition is a partition's cached request data and what the client
// was last told about it.
type sessionPartition struct {
	key sessionKey
	fetchPosition

	// Last values sent; -1 (or unset) forces the partition into the next
	// incremental response.
	highWatermark    int64
	logStartOffset   int64
	lastStableOffset int64
}

// fetchSession is one cached session. mu guards everything below; it is
// taken after fetchSessionCache.mu, never the other way.
type fetchSession struct {
	id           int32
	usesTopicIDs bool

	mu       sync.Mutex
	epoch    int32 // the epoch the next request must carry
	parts    []*sessionPartition
	byKey    map[sessionKey]*sessionPartition
	lastUsed time.Time
}

// fetchSessionCache holds at most slots sessions.
type fetchSessionCache struct {
	slots  int
	logger *slog.Logger

	mu       sync.Mutex
	sessions map[int32]*fetchSession
}

func newFetchSessionCache(slots int, logger *slog.Logger) *fetchSessionCache {
	return &fetchSessionCache{slots: slots, logger: logger, sessions: map[int32]*fetchSession{}}
}

// remove drops a session (a full fetch naming it, or a final epoch).
func (c *fetchSessionCache) remove(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, id)
}

// len is the number of cached sessions.
func (c *fetchSessionCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

// get returns the session for an incremental fetch, checking its epoch and
// advancing it: FETCH_SESSION_ID_NOT_FOUND for an unknown id,
// INVALID_FETCH_SESSION_EPOCH for a wrong epoch.
func (c *fetchSessionCache) get(id, epoch int32, usesTopicIDs bool, now time.Time) (*fetchSession, error) {
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	if s == nil {
		return nil, kerr.FetchSessionIDNotFound
	}
	if s.usesTopicIDs != usesTopicIDs {
		return nil, kerr.FetchSessionTopicIDError
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.epoch != epoch {
		return nil, kerr.InvalidFetchSessionEpoch
	}
	s.epoch = nextEpoch(s.epoch)
	s.lastUsed = now
	return s, nil
}

func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1 // 0 and -1 are reserved for full fetches
	}
	return e + 1
}

// create caches a new session for a full fetch's partitions, when a slot
// is free or can be taken: from a session unused for fetchSessionEvictAfter,
// else from the smallest session if the new one is larger (Kafka's rule:
// bigger sessions save more bandwidth). It returns nil when not cached;
// the client then keeps sending full fetches, which is legal.
func (c *fetchSessionCache) create(parts []*sessionPartition, usesTopicIDs bool, now time.Time) *fetchSession {
	if len(parts) == 0 || c.slots <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sessions) >= c.slots && !c.evictOne(len(parts), now) {
		return nil
	}
	s := &fetchSession{
		usesTopicIDs: usesTopicIDs,
		epoch:        1,
		parts:        parts,
		byKey:        make(map[sessionKey]*sessionPartition, len(parts)),
		lastUsed:     now,
	}
	for _, p := range parts {
		s.byKey[p.key] = p
	}
	for {
		id := rand.Int32()
		if _, taken := c.sessions[id]; id != 0 && !taken {
			s.id = id
			break
		}
	}
	c.sessions[s.id] = s
	return s
}

// evictOne frees a slot for a session of size partitions. The caller holds mu.
func (c *fetchSessionCache) evictOne(size int, now time.Time) bool {
	var stalest, smallest *fetchSession
	var stalestUsed time.Time
	smallestSize := 0
	for _, s := range c.sessions {
		s.mu.Lock()
		used, n := s.lastUsed, len(s.parts)
		s.mu.Unlock()
		if stalest == nil || used.Before(stalestUsed) {
			stalest, stalestUsed = s, used
		}
		if smallest == nil || n < smallestSize {
			smallest, smallestSize = s, n
		}
	}
	victim := smallest
	if stalest != nil && now.Sub(stalestUsed) > fetchSessionEvictAfter {
		victim = stalest
	} else if smallest == nil || smallestSize >= size {
		return false
	}
	delete(c.sessions, victim.id)
	c.logger.Debug("evicted fetch session", "session", victim.id)
	return true
}

// update applies an incremental request: changed or added partitions, then
// forgotten ones. The caller holds s.mu.
func (s *fetchSession) update(changed []*sessionPartition, forgotten []sessionKey) {
	for _, p := range changed {
		if old := s.byKey[p.key]; old != nil {
			// Everything the request says of it, as Kafka's
			// CachedPartition.updateRequestParams: a follower's last
			// fetched epoch and log start too. A stale last fetched epoch
			// made every fetch of a follower that had caught up into a
			// newer epoch diverge, so it truncated and refetched forever.
			old.fetchPosition = p.fetchPosition
			continue
		}
		s.byKey[p.key] = p
		s.parts = append(s.parts, p)
	}
	if len(forgotten) == 0 {
		return
	}
	for _, k := range forgotten {
		delete(s.byKey, k)
	}
	kept := s.parts[:0]
	for _, p := range s.parts {
		if s.byKey[p.key] == p {
			kept = append(kept, p)
		}
	}
	clear(s.parts[len(kept):])
	s.parts = kept
}

// rotate moves the partitions that returned data to the end of the order,
// so that under max_bytes every partition gets its turn (as Kafka does).
// The caller holds s.mu.
func (s *fetchSession) rotate(hadData map[sessionKey]bool) {
	if len(hadData) == 0 {
		return
	}
	front := make([]*sessionPartition, 0, len(s.parts))
	var back []*sessionPartition
	for _, p := range s.parts {
		if hadData[p.key] {
			back = append(back, p)
		} else {
			front = append(front, p)
		}
	}
	s.parts = append(front, back...)
}
