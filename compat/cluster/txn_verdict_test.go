package cluster

import (
	"slices"
	"strings"
	"testing"
)

// checkTxnCopy on hand-made logs: it passes a correct copy and names each
// way a broker could break exactly-once.
func TestCheckTxnCopy(t *testing.T) {
	const pid, zombie = 7, 8
	data := func(off int64, v string, producer int64) txnLogRecord {
		return txnLogRecord{Offset: off, Value: v, ProducerID: producer, Txn: true}
	}
	marker := func(off int64, producer int64, commit bool) txnLogRecord {
		return txnLogRecord{Offset: off, ProducerID: producer, Control: true, Commit: commit, Txn: true}
	}
	input := map[int32][]string{0: {"a", "b", "c"}}
	// a, b committed; a retried copy of c aborted; c committed.
	full := []txnLogRecord{
		data(0, "a", pid), data(1, "b", pid), marker(2, pid, true),
		data(3, "c", pid), marker(4, pid, false),
		data(5, "c", pid), marker(6, pid, true),
	}
	visible := func(offs ...int64) []txnLogRecord {
		var out []txnLogRecord
		for _, r := range full {
			if slices.Contains(offs, r.Offset) {
				out = append(out, r)
			}
		}
		return out
	}
	for _, c := range []struct {
		name      string
		input     map[int32][]string
		full      []txnLogRecord
		committed []txnLogRecord
		want      string // a problem containing this; "" for none
	}{
		{"correct copy", input, full, visible(0, 1, 2, 5, 6), ""},
		{"aborted record visible", input, full, visible(0, 1, 3, 5), "aborted transactions"},
		{"committed record hidden", input, full, visible(0, 5), "1 missing"},
		{"order changed", map[int32][]string{0: {"b", "a", "c"}}, full, visible(0, 1, 5), "order changed"},
		{"no abort in the log", input, []txnLogRecord{data(0, "a", pid), data(1, "b", pid), data(2, "c", pid), marker(3, pid, true)},
			[]txnLogRecord{data(0, "a", pid), data(1, "b", pid), data(2, "c", pid)}, "no aborted record"},
		{"open transaction", input, append(slices.Clone(full), data(7, "c", zombie)), visible(0, 1, 5), "no marker ended"},
		{"duplicate committed", input,
			append(slices.Clone(full), data(7, "c", pid), marker(8, pid, true)),
			append(visible(0, 1, 5), data(7, "c", pid)), "more than once"},
		{"visible without a marker", input, full, append(visible(0, 1, 5), txnLogRecord{Offset: 9, Value: "d"}), "no COMMIT marker"},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems, _ := checkTxnCopy(c.input, map[int32][]txnLogRecord{0: c.committed}, map[int32][]txnLogRecord{0: c.full})
			if c.want == "" {
				if len(problems) > 0 {
					t.Fatalf("problems in a correct copy: %v", problems)
				}
				return
			}
			for _, p := range problems {
				if strings.Contains(p, c.want) {
					return
				}
			}
			t.Fatalf("want a problem with %q, got %v", c.want, problems)
		})
	}
}
