package compat

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// The transactions that TestJavaTxnCommitAbort runs: C commits, A aborts.
const (
	txnPattern      = "CACCAC"
	txnPartitions   = 6
	txnPerPartition = 5
)

func javaTxn(t *testing.T, args ...string) string {
	t.Helper()
	return harness.TxnClient(t, 90*time.Second, args...)
}

// javaConsume reads topic's partitions to their end at isolation
// (read_committed or read_uncommitted) with the Java consumer.
func javaConsume(t *testing.T, addr, topic, isolation string, partitions int) harness.TxnConsumed {
	t.Helper()
	out := javaTxn(t, "consume", addr, topic, isolation, fmt.Sprint(partitions), "30000")
	got, err := harness.ParseTxnConsume(out)
	if err != nil {
		t.Fatalf("TxnClient consume %s: %v\n%s", isolation, err, tail(out, 4000))
	}
	return got
}

// checkJavaTxnCommitAbort produces txnPattern's transactions with the Java
// client and reads them back with Java consumers at both isolation levels.
func checkJavaTxnCommitAbort(t *testing.T, addr, topic string) {
	t.Helper()
	out := javaTxn(t, "produce", addr, topic, "java-txn-"+topic, fmt.Sprint(txnPartitions), fmt.Sprint(txnPerPartition), txnPattern)
	var want []string
	for i, c := range txnPattern {
		want = append(want, fmt.Sprintf("txn %d %s", i, map[rune]string{'C': "committed", 'A': "aborted"}[c]))
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, want) {
		t.Fatalf("TxnClient produce printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}

	// Every transaction ended with a marker, so both isolation levels read
	// up to the same end: the log end offset.
	end := int64(len(txnPattern) * (txnPerPartition + 1))
	for _, isolation := range []string{"read_committed", "read_uncommitted"} {
		got := javaConsume(t, addr, topic, isolation, txnPartitions)
		for p := range int32(txnPartitions) {
			if got.End[p] != end {
				t.Errorf("%s: end offset of partition %d = %d, want %d", isolation, p, got.End[p], end)
			}
			// Exactly these records, each once, in offset order: aborted
			// ones only under read_uncommitted, and never a control record
			// (each marker takes the offset after its transaction's last
			// record, which no record may have).
			want := harness.TxnExpected(txnPattern, txnPerPartition, p, isolation == "read_uncommitted")
			if !slices.Equal(got.Records[p], want) {
				t.Errorf("%s: partition %d records\n%v\nwant\n%v", isolation, p, got.Records[p], want)
			}
		}
	}
}

// TestJavaTxnCommitAbort: Kafka's Java producer commits some transactions
// and aborts others across 6 partitions; a read_committed Java consumer
// gets exactly the committed records, once and in order, and a
// read_uncommitted one every data record and no control record.
func TestJavaTxnCommitAbort(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "java-txn"
	createTopic(t, b.Addr, topic, txnPartitions, nil)
	checkJavaTxnCommitAbort(t, b.Addr, topic)
}

// fencedLine is TxnClient fence's report on the first producer: fenced, by
// ProducerFencedException (or InvalidProducerEpochException on older
// request versions) somewhere in the exception's cause chain.
var fencedLine = regexp.MustCompile(`(?m)^first fenced:.*\b(ProducerFencedException|InvalidProducerEpochException)\b`)

// TestJavaTxnFencing: a second Java producer with the same transactional.id
// fences the first; the first's open transaction is aborted (its records are
// in the log, for read_uncommitted, but never visible to read_committed) and
// its later writes are refused, while the second's commit is visible.
func TestJavaTxnFencing(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "java-txn-fence"
	createTopic(t, b.Addr, topic, 1, nil)
	out := javaTxn(t, "fence", b.Addr, topic, "java-txn-fence-id")
	t.Logf("TxnClient fence:\n%s", out)
	if !strings.Contains(out, "first open\nsecond committed\n") || !fencedLine.MatchString(out) {
		t.Fatalf("TxnClient fence printed\n%s\nwant first open, second committed, first fenced by ProducerFencedException or InvalidProducerEpochException", out)
	}

	values := func(c harness.TxnConsumed) []string {
		var v []string
		for _, r := range c.Records[0] {
			v = append(v, r.Value)
		}
		return v
	}
	second := []string{"second-r0", "second-r1", "second-r2"}
	if got := values(javaConsume(t, b.Addr, topic, "read_committed", 1)); !slices.Equal(got, second) {
		t.Errorf("read_committed got %v, want only the second producer's %v", got, second)
	}
	// The first producer's records were written before it was fenced, so
	// they are in the log (aborted); its write after the fence is not.
	all := append([]string{"first-r0", "first-r1", "first-r2"}, second...)
	if got := values(javaConsume(t, b.Addr, topic, "read_uncommitted", 1)); !slices.Equal(got, all) {
		t.Errorf("read_uncommitted got %v, want %v", got, all)
	}
}
