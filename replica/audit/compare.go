package audit

import (
	"encoding/binary"
)

// Header is what the audit compares of a record batch: the fields that
// place it in the log and its CRC, which covers everything from the
// attributes to the last record. The leader epoch lies outside the CRC, so
// it is compared on its own.
type Header struct {
	BaseOffset      int64
	LastOffsetDelta int32
	LeaderEpoch     int32
	CRC             uint32
}

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Byte positions in a magic-v2 batch (DefaultRecordBatch.java).
const (
	posBatchLength  = 8
	posLeaderEpoch  = 12
	posMagic        = 16
	posCRC          = 17
	posLastOffDelta = 23
	headerSize      = 61
)

// Headers reads the batch headers of buf, a fetch answer's records or a
// local read. It stops at a trailing partial batch (a broker may cut the
// last batch of an answer) and at anything that is not a magic-v2 batch:
// what follows cannot be placed, so it is not compared.
func Headers(buf []byte) []Header {
	var out []Header
	be := binary.BigEndian
	for len(buf) >= headerSize {
		size := int64(int32(be.Uint32(buf[posBatchLength:]))) + 12
		if size < headerSize || size > int64(len(buf)) || buf[posMagic] != 2 {
			break
		}
		out = append(out, Header{
			BaseOffset:      int64(be.Uint64(buf)),
			LastOffsetDelta: int32(be.Uint32(buf[posLastOffDelta:])),
			LeaderEpoch:     int32(be.Uint32(buf[posLeaderEpoch:])),
			CRC:             be.Uint32(buf[posCRC:]),
		})
		buf = buf[size:]
	}
	return out
}

// Divergence is the first batch in which two replicas differ. A side
// without a batch where the other has one has Missing set and a zero
// Header.
type Divergence struct {
	// Offset is the first offset the two replicas do not agree on.
	Offset          int64
	Leader          Header
	Follower        Header
	LeaderMissing   bool
	FollowerMissing bool
}

// Result is the outcome of one comparison.
type Result struct {
	// Compared counts the batches found equal.
	Compared int
	// Next is where the next comparison starts: just past the last batch
	// both sides covered and agreed on (from when none).
	Next int64
	// Divergence is set when the replicas differ; Next is then meaningless.
	Divergence *Divergence
}

// Compare compares the batches the leader and a follower hold for the
// offsets [from, end): end is at most both replicas' high watermarks, so
// both have committed data there. Batches ending at or past end, or
// before from, are left out. Either side may cover less than the other
// (reads are bounded in bytes): only the batches both cover are judged,
// pairwise in order, so a batch boundary, a leader epoch or a CRC that
// differs is a divergence, and so is a gap on one side (its next batch
// starts later than the other's).
func Compare(leader, follower []Header, from, end int64) Result {
	l := within(leader, from, end)
	f := within(follower, from, end)
	res := Result{Next: from}
	n := min(len(l), len(f))
	for i := range n {
		if l[i] != f[i] {
			return diverged(res, l[i], f[i], from)
		}
		res.Compared++
		res.Next = l[i].LastOffset() + 1
	}
	// A read returns at least one batch (KIP-74), so a side with none where
	// the other has one lacks it.
	switch {
	case n == 0 && len(l) > 0:
		res.Divergence = &Divergence{Offset: max(l[0].BaseOffset, from), Leader: l[0], FollowerMissing: true}
		return res
	case n == 0 && len(f) > 0:
		res.Divergence = &Divergence{Offset: max(f[0].BaseOffset, from), Follower: f[0], LeaderMissing: true}
		return res
	}
	// Past the shorter side nothing is judged: its read may have been
	// cut by size, and the next comparison starts at Next on both sides.
	return res
}

func diverged(res Result, l, f Header, from int64) Result {
	off := max(min(l.BaseOffset, f.BaseOffset), from)
	res.Divergence = &Divergence{Offset: off, Leader: l, Follower: f}
	return res
}

// within keeps the batches that lie wholly below end and end at or after
// from.
func within(hs []Header, from, end int64) []Header {
	i := 0
	for i < len(hs) && hs[i].LastOffset() < from {
		i++
	}
	j := i
	for j < len(hs) && hs[j].LastOffset() < end {
		j++
	}
	return hs[i:j]
}
