package audit

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

func hdr(base int64, delta int32, epoch int32, crc uint32) Header {
	return Header{BaseOffset: base, LastOffsetDelta: delta, LeaderEpoch: epoch, CRC: crc}
}

// log builds n batches of 10 offsets each from offset 0, epoch 1.
func log10(n int) []Header {
	var out []Header
	for i := range n {
		out = append(out, hdr(int64(i*10), 9, 1, uint32(100+i)))
	}
	return out
}

func TestCompareEqual(t *testing.T) {
	l, f := log10(5), log10(5)
	r := Compare(l, f, 0, 50)
	if r.Divergence != nil || r.Compared != 5 || r.Next != 50 {
		t.Fatalf("got %+v, want 5 compared, next 50", r)
	}
}

func TestCompareBounds(t *testing.T) {
	l, f := log10(5), log10(5)
	// The batch 40-49 crosses end 45: left out; 0-9 lies before from 10.
	r := Compare(l, f, 10, 45)
	if r.Divergence != nil || r.Compared != 3 || r.Next != 40 {
		t.Fatalf("got %+v, want 3 compared, next 40", r)
	}
	// A batch holding from (a log start inside a batch) is compared.
	r = Compare(l, f, 15, 30)
	if r.Compared != 2 || r.Next != 30 {
		t.Fatalf("got %+v, want 10-19 and 20-29 compared, next 30", r)
	}
	// Nothing below end: nothing compared, no progress.
	r = Compare(l, f, 0, 5)
	if r.Divergence != nil || r.Compared != 0 || r.Next != 0 {
		t.Fatalf("got %+v, want nothing", r)
	}
}

func TestCompareShorterSide(t *testing.T) {
	// A read cut by size is not a divergence: only the common part counts.
	r := Compare(log10(2), log10(5), 0, 50)
	if r.Divergence != nil || r.Compared != 2 || r.Next != 20 {
		t.Fatalf("got %+v, want 2 compared, next 20", r)
	}
	r = Compare(log10(5), log10(3), 0, 50)
	if r.Divergence != nil || r.Compared != 3 || r.Next != 30 {
		t.Fatalf("got %+v, want 3 compared, next 30", r)
	}
}

func TestCompareOneSideEmpty(t *testing.T) {
	// Reads return at least one batch: none on one side is a missing batch.
	r := Compare(nil, log10(3), 0, 50)
	if d := r.Divergence; d == nil || !d.LeaderMissing || d.FollowerMissing || d.Offset != 0 || d.Follower.CRC != 100 {
		t.Fatalf("got %+v, want the leader missing offset 0", r)
	}
	r = Compare(log10(3), nil, 5, 50)
	if d := r.Divergence; d == nil || !d.FollowerMissing || d.Offset != 5 {
		t.Fatalf("got %+v, want the follower missing offset 5", r)
	}
	if r := Compare(nil, nil, 0, 50); r.Divergence != nil || r.Compared != 0 {
		t.Fatalf("got %+v, want nothing", r)
	}
}

func TestCompareDivergent(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(f []Header) []Header
		offset int64
	}{
		{"crc", func(f []Header) []Header { f[2].CRC++; return f }, 20},
		{"leader epoch", func(f []Header) []Header { f[3].LeaderEpoch = 2; return f }, 30},
		{"batch boundary", func(f []Header) []Header {
			// 10-19 split into 10-14 and 15-19.
			return append(append(f[:1:1], hdr(10, 4, 1, 7), hdr(15, 4, 1, 8)), f[2:]...)
		}, 10},
		{"gap", func(f []Header) []Header { return append(f[:1:1], f[2:]...) }, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := log10(5)
			f := c.edit(log10(5))
			r := Compare(l, f, 0, 50)
			if r.Divergence == nil || r.Divergence.Offset != c.offset {
				t.Fatalf("got %+v, want a divergence at %d", r, c.offset)
			}
			if r.Compared != int(c.offset/10) {
				t.Fatalf("compared %d before the divergence, want %d", r.Compared, c.offset/10)
			}
			// Symmetric: the leader's side differing is found the same.
			r = Compare(f, l, 0, 50)
			if r.Divergence == nil || r.Divergence.Offset != c.offset {
				t.Fatalf("swapped: got %+v, want a divergence at %d", r, c.offset)
			}
		})
	}
}

func TestCompareDivergenceNamesBothCRCs(t *testing.T) {
	l, f := log10(3), log10(3)
	f[1].CRC = 0xdeadbeef
	d := Compare(l, f, 0, 30).Divergence
	if d == nil || d.Leader.CRC != 101 || d.Follower.CRC != 0xdeadbeef || d.Offset != 10 {
		t.Fatalf("got %+v", d)
	}
}

// batchBytes builds a minimal magic-v2 batch with no records: enough for
// Headers, which reads only the header.
func batchBytes(base int64, delta, epoch int32, extra int) []byte {
	b := make([]byte, headerSize+extra)
	be := binary.BigEndian
	be.PutUint64(b, uint64(base))
	be.PutUint32(b[posBatchLength:], uint32(len(b)-12))
	be.PutUint32(b[posLeaderEpoch:], uint32(epoch))
	b[posMagic] = 2
	be.PutUint32(b[posLastOffDelta:], uint32(delta))
	be.PutUint32(b[posCRC:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func TestHeaders(t *testing.T) {
	a := batchBytes(0, 4, 3, 5)
	b := batchBytes(5, 0, 3, 0)
	buf := append(append([]byte{}, a...), b...)
	hs := Headers(buf)
	if len(hs) != 2 || hs[0].BaseOffset != 0 || hs[0].LastOffsetDelta != 4 || hs[0].LeaderEpoch != 3 || hs[1].BaseOffset != 5 {
		t.Fatalf("got %+v", hs)
	}
	if hs[0].CRC != binary.BigEndian.Uint32(a[posCRC:]) {
		t.Fatalf("crc %x", hs[0].CRC)
	}
	// A cut last batch is left out.
	if hs := Headers(buf[:len(buf)-3]); len(hs) != 1 {
		t.Fatalf("cut: got %+v", hs)
	}
	// Not magic v2: nothing from there on.
	old := append([]byte{}, buf...)
	old[len(a)+posMagic] = 1
	if hs := Headers(old); len(hs) != 1 {
		t.Fatalf("magic 1: got %+v", hs)
	}
	// A length below a header is garbage, not a batch.
	bad := append([]byte{}, buf...)
	binary.BigEndian.PutUint32(bad[posBatchLength:], 3)
	if hs := Headers(bad); len(hs) != 0 {
		t.Fatalf("bad length: got %+v", hs)
	}
	if hs := Headers(nil); len(hs) != 0 {
		t.Fatalf("empty: got %+v", hs)
	}
}
