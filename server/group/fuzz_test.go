package group

import "testing"

// FuzzReplayBatch feeds arbitrary __consumer_offsets records, plain and
// transactional, and markers to the replay: a damaged record fails the
// load with an error, never a panic.
func FuzzReplayBatch(f *testing.F) {
	f.Add(offsetCommitKey("g", topicPartition{"t", 0}), offsetCommitValue(committedOffset{offset: 5, leaderEpoch: -1, expireTimestamp: noExpireTimestamp}), true, true)
	f.Add(groupMetadataKey("g"), []byte{0, 3}, false, false)
	f.Add([]byte{0, 1}, []byte{}, true, false)
	f.Fuzz(func(t *testing.T, key, value []byte, transactional, commit bool) {
		if len(value) == 0 {
			value = nil // a tombstone: the corpus format has no nil
		}
		r := newReplayedPartition()
		_, _ = r.applyBatch(ReplayedBatch{BaseOffset: 1, ProducerID: 7, Transactional: transactional, Records: []KV{{key, value}}})
		_, _ = r.applyBatch(ReplayedBatch{BaseOffset: 2, ProducerID: 7, Transactional: true, Control: true, Commit: commit})
		if len(r.pending) != 0 {
			t.Fatalf("a marker left pending offsets: %v", r.pending)
		}
	})
}
