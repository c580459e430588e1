package coordpartition

import "testing"

func TestForMatchesJava(t *testing.T) {
	cases := []struct {
		s    string
		hash int32 // java.lang.String.hashCode
	}{
		{"", 0},
		{"a", 97},
		{"hello", 99162322},
		{"polygenelubricants", -2147483648},
		{"\U0001F600", 1772899}, // a surrogate pair: hashed as two UTF-16 units
	}
	for _, tc := range cases {
		h := javaHash(tc.s)
		if h != tc.hash {
			t.Fatalf("hash(%q) = %d, want %d", tc.s, h, tc.hash)
		}
	}
	// Partitions as Kafka computes them for 50 partitions.
	for _, tc := range []struct {
		key  string
		want int32
	}{{"my-group", 12}, {"kafka-txn-0", 30}, {"polygenelubricants", 0}} {
		if got := For(tc.key, 50); got != tc.want {
			t.Fatalf("For(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	// A negative hash is made positive with abs, not by masking the sign.
	neg := "hello world, this hashes negative?"
	for i := 0; i < 64 && javaHash(neg) >= 0; i++ {
		neg += "!"
	}
	if javaHash(neg) >= 0 {
		t.Fatal("no negative hash found")
	}
	if got, want := For(neg, 50), (-javaHash(neg))%50; got != want {
		t.Fatalf("For(%q) = %d, want %d", neg, got, want)
	}
}
