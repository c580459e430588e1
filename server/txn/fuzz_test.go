package txn

import (
	"bytes"
	"testing"
)

// FuzzDecodeTxnKey: any bytes either decode or fail, never panic; what
// decodes encodes back to the bytes it was read from. Trailing bytes are
// ignored, as Kafka's generated reader ignores them.
func FuzzDecodeTxnKey(f *testing.F) {
	f.Add(txnKey("tx"))
	f.Add(txnKey(""))
	f.Add([]byte{0, 1, 0, 2, 't', 'x'})
	f.Fuzz(func(t *testing.T, key []byte) {
		id, err := decodeTxnKey(key)
		if err != nil {
			return
		}
		if got := txnKey(id); !bytes.HasPrefix(key, got) {
			t.Fatalf("key %x decoded to %q, which encodes to %x", key, id, got)
		}
	})
}

// FuzzDecodeTxnValue: any bytes either decode or fail; a decoded value
// written back as version 0 decodes to the same metadata.
func FuzzDecodeTxnValue(f *testing.F) {
	f.Add(txnValue(txnTransit{producerID: 1000, producerEpoch: 2, timeoutMs: 60000, state: stateOngoing,
		partitions: partitionSet{tp("a", 0): {}, tp("b", 1): {}}, startTimestamp: 5, lastUpdate: 6}))
	f.Add(txnValue(txnTransit{producerID: 1, state: stateEmpty, partitions: partitionSet{}, startTimestamp: -1}))
	f.Fuzz(func(t *testing.T, value []byte) {
		m, err := decodeTxnValue("tx", value)
		if err != nil {
			return
		}
		tr := txnTransit{producerID: m.producerID, producerEpoch: m.producerEpoch, timeoutMs: m.timeoutMs,
			state: m.state, partitions: m.partitions, startTimestamp: m.startTimestamp, lastUpdate: m.lastUpdate}
		again, err := decodeTxnValue("tx", txnValue(tr))
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		if again.producerID != m.producerID || again.producerEpoch != m.producerEpoch || again.timeoutMs != m.timeoutMs ||
			again.state != m.state || !again.partitions.equal(m.partitions) ||
			again.startTimestamp != m.startTimestamp || again.lastUpdate != m.lastUpdate {
			t.Fatalf("round trip: %+v became %+v", m, again)
		}
	})
}
