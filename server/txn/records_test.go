package txn

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// unhex reads hex with spaces and comments (from '#' to the end of a line),
// so each field of the golden records below can be annotated.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The golden bytes follow TransactionLogKey.json (version 0: a string) and
// TransactionLogValue.json (version 0, not flexible: int16 lengths for
// strings, int32 lengths for arrays, -1 for the null partition list),
// each prefixed with its int16 version as MessageUtil.toVersionPrefixedBytes
// writes it.
func TestRecordsMatchKafkaSchemas(t *testing.T) {
	key := unhex(t, `
		0000      # key version 0
		0002 7478 # TransactionalId "tx"
	`)
	if got := txnKey("tx"); !bytes.Equal(got, key) {
		t.Fatalf("key %x, want %x", got, key)
	}
	if id, err := decodeTxnKey(key); err != nil || id != "tx" {
		t.Fatalf("decoded key %q, %v", id, err)
	}

	ongoing := txnTransit{
		producerID: 1000, producerEpoch: 2, timeoutMs: 60000, state: stateOngoing,
		partitions:     partitionSet{tp("b", 3): {}, tp("a", 1): {}, tp("a", 0): {}},
		startTimestamp: 1727783995000, lastUpdate: 1727784000000,
	}
	value := unhex(t, `
		0000               # value version 0
		00000000000003e8   # ProducerId 1000
		0002               # ProducerEpoch 2
		0000ea60           # TransactionTimeoutMs 60000
		01                 # TransactionStatus Ongoing
		00000002           # TransactionPartitions: 2 topics
		  0001 61            # Topic "a"
		  00000002 00000000 00000001 # PartitionIds [0 1]
		  0001 62            # Topic "b"
		  00000001 00000003  # PartitionIds [3]
		0000019247f39a00   # TransactionLastUpdateTimestampMs
		0000019247f38678   # TransactionStartTimestampMs
	`)
	if got := txnValue(ongoing); !bytes.Equal(got, value) {
		t.Fatalf("value\n got %x\nwant %x", got, value)
	}
	m, err := decodeTxnValue("tx", value)
	if err != nil {
		t.Fatal(err)
	}
	if m.producerID != 1000 || m.producerEpoch != 2 || m.timeoutMs != 60000 || m.state != stateOngoing ||
		!m.partitions.equal(ongoing.partitions) || m.startTimestamp != ongoing.startTimestamp ||
		m.lastUpdate != ongoing.lastUpdate || m.lastProducerEpoch != noProducerEpoch || m.hasPending() {
		t.Fatalf("decoded %+v", m)
	}

	empty := txnTransit{producerID: 1000, producerEpoch: 0, timeoutMs: 60000, state: stateEmpty,
		partitions: partitionSet{}, startTimestamp: -1, lastUpdate: 1727784000000}
	emptyValue := unhex(t, `
		0000 00000000000003e8 0000 0000ea60
		00                 # Empty
		ffffffff           # TransactionPartitions null
		0000019247f39a00
		ffffffffffffffff   # no start timestamp
	`)
	if got := txnValue(empty); !bytes.Equal(got, emptyValue) {
		t.Fatalf("empty value\n got %x\nwant %x", got, emptyValue)
	}

	// A PrepareCommit with no partitions still writes an empty list, not
	// null: only Empty writes null.
	prep := empty
	prep.state = statePrepareCommit
	if got := txnValue(prep); !bytes.Contains(got, []byte{0x02, 0, 0, 0, 0}) {
		t.Fatalf("PrepareCommit without partitions: %x", got)
	}
}

func TestDecodeReadsFlexibleValueVersion1(t *testing.T) {
	// Version 1 (KIP-915, written by Kafka 4.0 with transaction.version
	// 1+): compact strings and arrays, tagged fields.
	value := unhex(t, `
		0001 00000000000003e8 0002 0000ea60
		04                 # CompleteCommit
		01                 # compact array, 0 topics
		0000019247f39a00 0000019247f38678
		00                 # no tagged fields
	`)
	m, err := decodeTxnValue("tx", value)
	if err != nil {
		t.Fatal(err)
	}
	if m.state != stateCompleteCommit || m.producerEpoch != 2 || len(m.partitions) != 0 {
		t.Fatalf("%+v", m)
	}
}

func TestDecodeRejectsBadRecords(t *testing.T) {
	for name, v := range map[string]string{
		"short":         "00",
		"version 2":     "0002 00000000000003e8 0002 0000ea60 00 ffffffff 0000019247f39a00 ffffffffffffffff",
		"unknown state": "0000 00000000000003e8 0002 0000ea60 09 ffffffff 0000019247f39a00 ffffffffffffffff",
		"truncated":     "0000 00000000000003e8 0002",
	} {
		if _, err := decodeTxnValue("tx", unhex(t, v)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	if _, err := decodeTxnKey(unhex(t, "0001 0002 7478")); err == nil {
		t.Error("key version 1 decoded")
	}
	if _, err := decodeTxnKey(unhex(t, "0000 0005 74")); err == nil {
		t.Error("truncated key decoded")
	}
}

func TestLoadSkipsUnknownKeyVersions(t *testing.T) {
	h := newHarness(t)
	pid, _ := h.mustInit("tx")
	p := h.c.PartitionFor("tx")
	if err := h.log.Append(t.Context(), p, []KV{{Key: unhex(t, "0001 0002 7478"), Value: []byte{1, 2, 3}}}); err != nil {
		t.Fatal(err)
	}
	h.restart()
	if s := h.wantState("tx", "Empty"); s.ProducerID != pid {
		t.Fatalf("%+v", s)
	}
}

func TestLoadFailsOnCorruptValue(t *testing.T) {
	h := newHarness(t)
	p := h.c.PartitionFor("tx")
	if err := h.log.Append(t.Context(), p, []KV{{Key: txnKey("tx"), Value: []byte{0, 0, 1}}}); err != nil {
		t.Fatal(err)
	}
	h.c.UnloadPartition(p, -1)
	if err := h.c.LoadPartition(p, h.epoch+1); err == nil {
		t.Fatal("corrupt value loaded")
	}
	if _, _, code := h.init("tx", time.Second); code != errNotCoordinator {
		t.Fatalf("after a failed load: %d", code)
	}
}
