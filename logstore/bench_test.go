package logstore

import (
	"testing"
)

func BenchmarkAppend(b *testing.B) {
	l, err := OpenFileLog(b.TempDir()+"/t-0", DefaultConfig(), FileLogOptions{CleanShutdown: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tmpl := mkBatch(b, 10, 0)
	raw := make([]byte, len(tmpl.Raw))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		copy(raw, tmpl.Raw)
		bs := []Batch{{Header: tmpl.Header, Raw: raw}}
		if _, err := l.AppendAsLeader(bs, 1, -1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBatches(b *testing.B) {
	raw := mkBatch(b, 100, 0).Raw
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseBatches(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIndexLookup(b *testing.B) {
	x := offsetIndex{baseOffset: 0, maxEntries: 1 << 20}
	for i := 0; i < 1<<20; i++ {
		x.rel = append(x.rel, int32(i*10))
		x.pos = append(x.pos, int32(i*4096))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.lookup(int64(i*7919) % (10 << 20))
	}
}

func BenchmarkReadLocate(b *testing.B) {
	cfg := DefaultConfig()
	l, err := OpenFileLog(b.TempDir()+"/t-0", cfg, FileLogOptions{CleanShutdown: true, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	appendN(b, l, 20000, 10, 0, 0)
	leo := l.LogEndOffset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Read(int64(i*7919)%leo, 1<<62, 1<<20, true); err != nil {
			b.Fatal(err)
		}
	}
}
