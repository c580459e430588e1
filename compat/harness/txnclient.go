package harness

import (
	"fmt"
	"strconv"
	"strings"
)

// TxnConsumed is what compat/java/TxnClient's consume mode printed: the end
// offset it read up to and the records it got, per partition in the order
// the consumer returned them.
type TxnConsumed struct {
	End     map[int32]int64
	Records map[int32][]TxnRecord
}

// TxnRecord is one record TxnClient consumed.
type TxnRecord struct {
	Offset int64
	Value  string
}

// ParseTxnConsume reads TxnClient consume's "end P OFFSET" and
// "record P OFFSET VALUE" lines; any other line is an error.
func ParseTxnConsume(out string) (TxnConsumed, error) {
	got := TxnConsumed{End: map[int32]int64{}, Records: map[int32][]TxnRecord{}}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[0] == "record") != (len(f) == 4) || (f[0] != "record" && f[0] != "end") {
			return got, fmt.Errorf("unexpected line %q", line)
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return got, fmt.Errorf("unexpected line %q", line)
		}
		if f[0] == "end" {
			got.End[int32(p)] = off
			continue
		}
		got.Records[int32(p)] = append(got.Records[int32(p)], TxnRecord{Offset: off, Value: f[3]})
	}
	return got, nil
}

// TxnExpected is what TxnClient produce wrote with PATTERN and PER_PARTITION
// and what a consumer must read back: each transaction's records on a
// partition take consecutive offsets and its marker the next one, so
// record r of transaction i is at offset i*(perPartition+1)+r. Aborted
// transactions are left out unless uncommitted is set.
func TxnExpected(pattern string, perPartition int, partition int32, uncommitted bool) []TxnRecord {
	var out []TxnRecord
	for i := range len(pattern) {
		if pattern[i] != 'C' && !uncommitted {
			continue
		}
		for r := range perPartition {
			out = append(out, TxnRecord{
				Offset: int64(i*(perPartition+1) + r),
				Value:  fmt.Sprintf("t%d-p%d-r%d", i, partition, r),
			})
		}
	}
	return out
}
