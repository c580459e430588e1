package logstore

import (
	"bytes"
	"os"
	"testing"
)

func FuzzParseBatches(f *testing.F) {
	one := mkBatch(f, 3, 1000, "a", "b").Raw
	f.Add(one)
	f.Add(append(append([]byte(nil), one...), one...))
	f.Add(one[:len(one)-3])
	gz, _ := EncodeBatch(BatchOptions{Compression: CompressionGzip}, []Record{{Key: []byte("k"), Value: []byte("v")}})
	f.Add(gz.Raw)
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, err := ParseBatches(data)
		if err != nil {
			return
		}
		n := 0
		for _, b := range bs {
			n += len(b.Raw)
			if b.Header.Size() != len(b.Raw) || b.Header.Magic != 2 {
				t.Fatalf("inconsistent batch %+v", b.Header)
			}
			DecodeRecords(b) // must not panic
		}
		if n != len(data) {
			t.Fatalf("batches cover %d of %d bytes", n, len(data))
		}
	})
}

// FuzzRecover appends arbitrary bytes to a valid segment: recovery must
// never fail or panic, and must keep exactly the valid prefix (plus any
// appended bytes that happen to form valid batches continuing it).
func FuzzRecover(f *testing.F) {
	f.Add([]byte("garbage"))
	f.Add(mkBatch(f, 2, 5).Raw)
	f.Add(mkBatch(f, 2, 5).Raw[:30])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, tail []byte) {
		dir := t.TempDir() + "/t-0"
		cfg := smallCfg()
		l, err := OpenFileLog(dir, cfg, FileLogOptions{CleanShutdown: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 8, 2, 0, -1)
		good, _ := l.Read(0, 1<<62, 1<<20, true)
		want, _ := good.Bytes()
		base := l.SegmentBaseOffsets()[len(l.SegmentBaseOffsets())-1]
		crash(l)
		path := segmentName(dir, base, ".log")
		fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		fh.Write(tail)
		fh.Close()
		l2, err := OpenFileLog(dir, cfg, FileLogOptions{Logger: quiet})
		if err != nil {
			t.Fatalf("recovery failed: %v", err)
		}
		defer l2.Close()
		res, err := l2.Read(0, 1<<62, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := res.Bytes()
		if !bytes.HasPrefix(got, want) {
			t.Fatalf("recovered log lost valid data: %d bytes, want prefix of %d", len(got), len(want))
		}
		if _, err := ParseBatches(got); err != nil {
			t.Fatalf("recovered log does not parse: %v", err)
		}
		if l2.LogEndOffset() < 16 {
			t.Fatalf("LEO %d", l2.LogEndOffset())
		}
	})
}

// FuzzDecodeTxnIndex: any bytes decode or are refused; what decodes
// encodes back to the same whole entries.
func FuzzDecodeTxnIndex(f *testing.F) {
	one := AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 4}.appendTo(nil)
	f.Add(one)
	f.Add(AbortedTxn{ProducerID: 2, FirstOffset: 3, LastOffset: 9, LastStableOffset: 10}.appendTo(bytes.Clone(one)))
	f.Add(one[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := DecodeTxnIndex(data)
		if err != nil {
			return
		}
		var out []byte
		for _, a := range entries {
			out = a.appendTo(out)
		}
		if whole := len(data) / abortedTxnSize * abortedTxnSize; !bytes.Equal(out, data[:whole]) {
			t.Fatalf("round trip differs")
		}
	})
}

// FuzzDecodeTxnMarker: a control record's key and value decode or are
// refused, never panic; a decoded marker re-encodes to the same fields.
func FuzzDecodeTxnMarker(f *testing.F) {
	f.Add(EncodeControlKey(ControlCommit), encodeTxnMarkerValue(7))
	f.Add(EncodeControlKey(ControlAbort), encodeTxnMarkerValue(-1))
	f.Add([]byte{0, 0, 0, 2}, []byte{0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		m, err := DecodeTxnMarker(key, value)
		if err != nil {
			return
		}
		typ := ControlAbort
		if m.Commit {
			typ = ControlCommit
		}
		m2, err := DecodeTxnMarker(EncodeControlKey(typ), encodeTxnMarkerValue(m.CoordinatorEpoch))
		if err != nil || m2 != m {
			t.Fatalf("re-decoded %+v %v, want %+v", m2, err, m)
		}
	})
}
