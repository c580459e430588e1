package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
)

// mustMatch fails the test unless out has a line matching the regular
// expression re (multi-line: ^ and $ are a line's ends).
func mustMatch(t *testing.T, what, out, re string) {
	t.Helper()
	if !regexp.MustCompile(`(?m)` + re).MatchString(out) {
		t.Errorf("%s: no line matches %s in:\n%s", what, re, tail(out, 4000))
	}
}

// dataLines are out's lines after the header of a TransactionsCommand table.
func dataLines(out string) []string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) <= 1 {
		return nil
	}
	return lines[1:]
}

// txnToolsSetup writes partition 0 of topic with a committed transaction
// (offsets 0-1, marker 2), an aborted one (3-4, marker 5) and one left open
// (6), and returns the three producers' ids.
func txnToolsSetup(t *testing.T, addr, topic string) (committed, aborted, open int64) {
	t.Helper()
	adm := newAdmin(t, addr)
	c := txnProducer(t, addr, "tools-committed", time.Minute)
	runTxn(t, c, kgo.TryCommit, txnRecords(topic, "c", 2)...)
	waitOffsets(t, adm, topic, 3, 3)
	a := txnProducer(t, addr, "tools-aborted", time.Minute)
	runTxn(t, a, kgo.TryAbort, txnRecords(topic, "a", 2)...)
	waitOffsets(t, adm, topic, 6, 6)
	o := txnProducer(t, addr, "tools-open", 2*time.Minute)
	beginTxn(t, o, txnRecords(topic, "o", 1)...)
	waitOffsets(t, adm, topic, 6, 7)
	return producerID(t, c), producerID(t, a), producerID(t, o)
}

// TestTransactionsCommand: kafka-transactions list, describe,
// describe-producers, find-hanging and abort show and end the transactions
// a broker holds, and kafka-dump-log decodes its .txnindex and
// __transaction_state segments.
func TestTransactionsCommand(t *testing.T) {
	b := harness.StartBroker(t)
	const topic = "txn-tools"
	createTopic(t, b.Addr, topic, 1, nil)
	committed, aborted, open := txnToolsSetup(t, b.Addr, topic)
	txns := func(args ...string) string {
		return tool(t, "kafka-transactions", append([]string{"--bootstrap-server", b.Addr}, args...)...)
	}

	list := txns("list")
	mustMatch(t, "list", list, `^TransactionalId\s+Coordinator\s+ProducerId\s+TransactionState\s*$`)
	mustMatch(t, "list", list, fmt.Sprintf(`^tools-committed\s+0\s+%d\s+CompleteCommit\s*$`, committed))
	mustMatch(t, "list", list, fmt.Sprintf(`^tools-aborted\s+0\s+%d\s+CompleteAbort\s*$`, aborted))
	mustMatch(t, "list", list, fmt.Sprintf(`^tools-open\s+0\s+%d\s+Ongoing\s*$`, open))

	desc := txns("describe", "--transactional-id", "tools-open")
	// CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState
	// TransactionTimeoutMs CurrentTransactionStartTimeMs TransactionDurationMs
	// TopicPartitions
	mustMatch(t, "describe", desc, fmt.Sprintf(`^0\s+tools-open\s+%d\s+\d+\s+Ongoing\s+120000\s+\d+\s+\d+\s+%s-0\s*$`, open, topic))

	producers := func() string {
		out := txns("describe-producers", "--topic", topic, "--partition", "0")
		return out
	}
	// ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence
	// LastTimestamp CurrentTransactionStartOffset
	// (A producer whose transaction ended has the sequence it wrote last
	// or, if the marker bumped its epoch (KIP-890), -1.)
	prod := producers()
	mustMatch(t, "describe-producers", prod, fmt.Sprintf(`^%d\s+\d+\s+-?\d+\s+(1|-1)\s+\d+\s+None\s*$`, committed))
	mustMatch(t, "describe-producers", prod, fmt.Sprintf(`^%d\s+\d+\s+-?\d+\s+(1|-1)\s+\d+\s+None\s*$`, aborted))
	mustMatch(t, "describe-producers", prod, fmt.Sprintf(`^%d\s+\d+\s+-?\d+\s+0\s+\d+\s+6\s*$`, open))

	// The open transaction is its coordinator's, with this partition in it:
	// not hanging, however short the timeout searched for.
	hanging := txns("find-hanging", "--broker-id", "0", "--max-transaction-timeout", "0")
	mustMatch(t, "find-hanging", hanging, `^Topic\s+Partition\s+ProducerId\s+ProducerEpoch\s+CoordinatorEpoch\s+StartOffset\s+LastTimestamp\s+Duration\(min\)\s*$`)
	if rows := dataLines(hanging); len(rows) != 0 {
		t.Errorf("find-hanging lists %v, want no hanging transaction", rows)
	}

	// abort writes the marker itself: the partition's transaction ends (the
	// marker at offset 7) and its last stable offset reaches the log end.
	txns("abort", "--topic", topic, "--partition", "0", "--start-offset", "6")
	mustMatch(t, "describe-producers after abort", producers(), fmt.Sprintf(`^%d\s+\d+\s+-?\d+\s+0\s+\d+\s+None\s*$`, open))
	lso, hwm, err := partitionOffsets(t, newAdmin(t, b.Addr), topic)
	if err != nil || lso != 8 || hwm != 8 {
		t.Errorf("after abort: last stable offset %d, high watermark %d (err %v), want 8 and 8", lso, hwm, err)
	}
	got := values(consumeN(t, b.Addr, topic, 2, 30*time.Second, kgo.FetchIsolationLevel(kgo.ReadCommitted())))
	if want := values(txnRecords(topic, "c", 2)); !slices.Equal(got, want) {
		t.Errorf("read_committed after abort read %v, want %v", got, want)
	}

	// Each abort left an entry in the segment's transaction index.
	idx, _ := filepath.Glob(filepath.Join(b.LogDir, topic+"-0", "*.txnindex"))
	if len(idx) != 1 {
		t.Fatalf("transaction indexes of %s-0: %v, want one", topic, idx)
	}
	dump := tool(t, "kafka-dump-log", "--files", idx[0])
	mustMatch(t, "kafka-dump-log .txnindex", dump, fmt.Sprintf(`producerId: %d firstOffset: 3 lastOffset: 5\b`, aborted))
	mustMatch(t, "kafka-dump-log .txnindex", dump, fmt.Sprintf(`producerId: %d firstOffset: 6 lastOffset: 7\b`, open))

	// The coordinator's log: every transactional id and its last state.
	var segs []string
	for _, f := range segmentFiles(t, b.LogDir) {
		if st, err := os.Stat(f); err == nil && st.Size() > 0 && strings.HasPrefix(filepath.Base(filepath.Dir(f)), "__transaction_state-") {
			segs = append(segs, f)
		}
	}
	if len(segs) == 0 {
		t.Fatalf("no non-empty __transaction_state segment under %s", b.LogDir)
	}
	state := tool(t, "kafka-dump-log", "--transaction-log-decoder", "--files", strings.Join(segs, ","))
	for _, w := range []struct {
		id     string
		pid    int64
		status string
	}{
		{"tools-committed", committed, "CompleteCommit"},
		{"tools-aborted", aborted, "CompleteAbort"},
		{"tools-open", open, "Ongoing"},
	} {
		mustMatch(t, "kafka-dump-log --transaction-log-decoder", state, fmt.Sprintf(
			`key: \{"type":"0","data":\{"transactionalId":"%s"\}\} payload: \{"version":"\d+","data":\{"producerId":%d,.*"transactionStatus":"%s"`,
			w.id, w.pid, w.status))
	}
	mustMatch(t, "kafka-dump-log --transaction-log-decoder", state,
		`"transactionalId":"tools-open".*"transactionStatus":"Ongoing","transactionPartitions":\[\{"topic":"`+topic+`","partitionIds":\[0\]\}\]`)
}
