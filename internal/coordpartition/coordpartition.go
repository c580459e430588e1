// Package coordpartition maps a key (a group id, a transactional id) to the
// partition of the coordinator's internal topic (__consumer_offsets,
// __transaction_state) that owns it, the way Kafka's GroupMetadataManager
// and TransactionStateManager do in partitionFor.
package coordpartition

import "unicode/utf16"

// For is Utils.abs(key.hashCode) % partitions, with Java's String.hashCode
// over UTF-16 code units. Kafka's Utils.abs maps Integer.MIN_VALUE to 0 and
// is Math.abs otherwise, which differs from masking the sign bit; every
// broker of a cluster, Kafka's included, must pick the same coordinator, so
// we follow it.
func For(key string, partitions int32) int32 {
	h := javaHash(key)
	switch {
	case h == -2147483648:
		h = 0
	case h < 0:
		h = -h
	}
	return h % partitions
}

// javaHash is java.lang.String.hashCode.
func javaHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}
