package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
)

// The transactions TestJavaTxnReplicated runs: C commits, A aborts.
const (
	txnPattern      = "CACCAC"
	txnPartitions   = 6
	txnPerPartition = 5
)

func javaTxn(t *testing.T, args ...string) string {
	t.Helper()
	return harness.TxnClient(t, 90*time.Second, args...)
}

// TestJavaTxnReplicated: on three brokers, with the topic's 6 partitions and
// __transaction_state replicated three times, Kafka's Java producer commits
// some transactions and aborts others; the coordinator and the partition
// leaders are spread over the brokers, so markers cross between them. A
// read_committed Java consumer gets exactly the committed records, once and
// in order; a read_uncommitted one every data record and no control record.
func TestJavaTxnReplicated(t *testing.T) {
	c := harness.StartCluster(t, 3)
	const topic = "java-txn-rf3"
	createTopic(t, c, topic, txnPartitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")})
	seeds := strings.Join(c.Addrs(), ",")

	out := javaTxn(t, "produce", seeds, topic, "java-txn-rf3", fmt.Sprint(txnPartitions), fmt.Sprint(txnPerPartition), txnPattern)
	var want []string
	for i, r := range txnPattern {
		want = append(want, fmt.Sprintf("txn %d %s", i, map[rune]string{'C': "committed", 'A': "aborted"}[r]))
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, want) {
		t.Fatalf("TxnClient produce printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}

	end := int64(len(txnPattern) * (txnPerPartition + 1))
	for _, isolation := range []string{"read_committed", "read_uncommitted"} {
		out := javaTxn(t, "consume", seeds, topic, isolation, fmt.Sprint(txnPartitions), "30000")
		got, err := harness.ParseTxnConsume(out)
		if err != nil {
			t.Fatalf("TxnClient consume %s: %v\n%s", isolation, err, out)
		}
		for p := range int32(txnPartitions) {
			if got.End[p] != end {
				t.Errorf("%s: end offset of partition %d = %d, want %d", isolation, p, got.End[p], end)
			}
			want := harness.TxnExpected(txnPattern, txnPerPartition, p, isolation == "read_uncommitted")
			if !slices.Equal(got.Records[p], want) {
				t.Errorf("%s: partition %d records\n%v\nwant\n%v", isolation, p, got.Records[p], want)
			}
		}
	}
}
