package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The versions a step sends when it is not the request under test: the
// highest Kafka 3.9.1 serves to clients, as its own Java client sends them
// (AddPartitionsToTxn v4 and later are the brokers' verification form).
const (
	txnInitV       int16 = 5
	txnAddV        int16 = 3
	txnEndV        int16 = 4
	txnProduceV    int16 = 11
	txnTimeoutMs         = 60000
	txnBadInputTop       = "txn-bad-input"
)

// txnScenario is one sequence of requests, run once per version of the
// request under test, each time with a fresh transactional id. The
// expected answers, one transcript per scenario and version, are Kafka
// 3.9.1's in testdata/txn_bad_input.kafka39 (docs/transactions-errors.md
// explains them).
type txnScenario struct {
	name     string
	api      kmsg.Key
	versions []int16
	run      func(c *txnClient, v int16)
}

func versions(lo, hi int16) []int16 {
	var vs []int16
	for v := lo; v <= hi; v++ {
		vs = append(vs, v)
	}
	return vs
}

var txnBadInputScenarios = []txnScenario{
	// (a) Nothing was added, so there is nothing to end.
	{"end-txn-nothing-added", kmsg.EndTxn, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.endTxn(v, pid, epoch, true)
		c.describe()
		c.endTxn(v, pid, epoch, false)
		c.describe()
	}},
	// (a) A retried commit of a completed commit, then an abort of it.
	{"end-txn-after-completed-commit", kmsg.EndTxn, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.produce(txnProduceV, pid, epoch, 0, 0)
		c.endTxn(txnEndV, pid, epoch, true)
		c.waitState("CompleteCommit")
		c.endTxn(v, pid, epoch, true)
		c.describe()
		c.endTxn(v, pid, epoch, false)
		c.describe()
	}},
	// (b) A second InitProducerId bumped the epoch; the first producer
	// still uses the old one.
	{"add-partitions-stale-epoch", kmsg.AddPartitionsToTxn, versions(0, 5), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.initProducerID(txnInitV, txnTimeoutMs, "second producer ")
		c.addPartitions(v, pid, epoch, 0)
		c.describe()
	}},
	{"end-txn-stale-epoch", kmsg.EndTxn, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.initProducerID(txnInitV, txnTimeoutMs, "second producer ")
		c.endTxn(v, pid, epoch, true)
		c.describe()
	}},
	// (c) TxnOffsetCommit without AddOffsetsToTxn for its group.
	{"txn-offset-commit-group-not-added", kmsg.TxnOffsetCommit, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.txnOffsetCommit(v, pid, epoch, "group-"+c.txnID)
		c.describe()
	}},
	{"txn-offset-commit-nothing-added", kmsg.TxnOffsetCommit, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.txnOffsetCommit(v, pid, epoch, "group-"+c.txnID)
		c.describe()
	}},
	// (d) A second producer's InitProducerId aborts the first one's open
	// transaction (bumping the epoch once to fence it, and once more when
	// the retried InitProducerId succeeds); the first producer carries on
	// with its old epoch. Its Produce goes last, once the abort completed:
	// while the abort markers are in flight the partition still holds the
	// transaction at the old epoch, and Kafka 3.9.1 then appends the stale
	// batch (to abort it with the marker) or refuses it, depending on
	// timing.
	{"init-producer-id-races-open-txn", kmsg.InitProducerID, versions(0, 5), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.produce(txnProduceV, pid, epoch, 0, 0)
		c.initProducerID(v, txnTimeoutMs, "second producer ")
		c.addPartitions(txnAddV, pid, epoch, 1)
		c.endTxn(txnEndV, pid, epoch, true)
		c.initUntilDone(v, txnTimeoutMs, "second producer ")
		c.produce(txnProduceV, pid, epoch, 1, 0)
		c.describe()
	}},
	{"produce-fenced-epoch", kmsg.Produce, versions(3, 11), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.produce(txnProduceV, pid, epoch, 0, 0)
		c.initProducerID(txnInitV, txnTimeoutMs, "second producer ")
		c.initUntilDone(txnInitV, txnTimeoutMs, "second producer ")
		c.produce(v, pid, epoch, 1, 0)
		c.describe()
	}},
	// (e) KIP-890 part 1: the partition leader asks the coordinator whether
	// the partition is in the transaction before it appends.
	{"produce-partition-not-added", kmsg.Produce, versions(3, 11), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.produce(v, pid, epoch, 0, 1)
		c.describe()
	}},
	{"produce-nothing-added", kmsg.Produce, versions(3, 11), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.produce(v, pid, epoch, 0, 0)
		c.describe()
	}},
	// (e) The verification request itself, as a partition leader sends it.
	{"verify-partition-not-added", kmsg.AddPartitionsToTxn, versions(4, 5), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.addPartitions(v, pid, epoch, 0, 1)
		c.describe()
	}},
	// (f)
	{"end-txn-wrong-producer-id", kmsg.EndTxn, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, txnTimeoutMs, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.endTxn(v, pid+1000, epoch, true)
		c.describe()
	}},
	// (g) The transactional id has never been initialised.
	{"add-partitions-before-init", kmsg.AddPartitionsToTxn, versions(0, 5), func(c *txnClient, v int16) {
		c.addPartitions(v, 4242, 0, 0)
		c.describe()
	}},
	{"add-offsets-before-init", kmsg.AddOffsetsToTxn, versions(0, 4), func(c *txnClient, v int16) {
		c.addOffsets(v, 4242, 0, "group-"+c.txnID)
		c.describe()
	}},
	{"end-txn-before-init", kmsg.EndTxn, versions(0, 4), func(c *txnClient, v int16) {
		c.endTxn(v, 4242, 0, true)
		c.describe()
	}},
	// (h) Kafka's default transaction.max.timeout.ms is 900000.
	{"init-producer-id-timeout-above-max", kmsg.InitProducerID, versions(0, 5), func(c *txnClient, v int16) {
		c.initProducerID(v, 900001, "")
		c.describe()
	}},
	// (i) The coordinator aborts a transaction older than its timeout
	// (checked every transaction.abort.timed.out.transaction.cleanup.
	// interval.ms, 1 s here) and bumps the epoch, fencing the producer.
	{"end-txn-after-timeout-abort", kmsg.EndTxn, versions(0, 4), func(c *txnClient, v int16) {
		_, pid, epoch := c.initProducerID(txnInitV, 1000, "")
		c.addPartitions(txnAddV, pid, epoch, 0)
		c.produce(txnProduceV, pid, epoch, 0, 0)
		c.waitState("CompleteAbort")
		c.describe()
		c.endTxn(v, pid, epoch, true)
		c.describe()
	}},
}

// TestTxnBadInput sends the transaction APIs out of order, with stale or
// wrong producer ids and epochs, and for partitions and groups the
// transaction does not hold, at every version a client may send, and
// expects exactly the error codes Apache Kafka 3.9.1 answers, and the
// transaction's state afterwards (DescribeTransactions: state, producer
// id and epoch, partitions) to be what Kafka 3.9.1 leaves. With
// KBROKER_ORACLE=kafka39 it runs against Kafka 3.9.1 and records those
// answers in testdata/txn_bad_input.kafka39.
func TestTxnBadInput(t *testing.T) {
	addr := startOracleTarget(t,
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
	)
	createTopic(t, addr, txnBadInputTop, 2, nil)
	waitTxnReady(t, addr)
	g := openGolden(t, "txn_bad_input.kafka39", `
Apache Kafka 3.9.1's answers to TestTxnBadInput (compat/txn_bad_input_test.go).
Regenerate: scripts/deps-kafka39.sh && KBROKER_ORACLE=kafka39 go test -count=1 -run TestTxnBadInput ./compat/
P is the producer id of the first InitProducerId of a section; p0 and p1 are partitions of txn-bad-input.`)
	for _, sc := range txnBadInputScenarios {
		for _, v := range sc.versions {
			section := fmt.Sprintf("%s %s v%d", sc.name, kmsg.NameForKey(sc.api.Int16()), v)
			t.Run(fmt.Sprintf("%s/v%d", sc.name, v), func(t *testing.T) {
				tr := &transcript{}
				c := newTxnClient(t, addr, txnBadInputTop, fmt.Sprintf("txn-%s-v%d", sc.name, v), tr)
				t.Cleanup(func() { g.check(t, section, tr) })
				sc.run(c, v)
			})
		}
	}
}

// waitTxnReady waits (bounded) until the broker leads both partitions of
// the test topic and its transaction and group coordinators answer, so
// that no scenario sees a coordinator still loading. A coordinator that
// never answers fails the test but still lets every scenario run, so that
// its transcript shows what the broker does answer.
func waitTxnReady(t *testing.T, addr string) {
	t.Helper()
	adm := newAdmin(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		md, err := adm.Metadata(ctx, txnBadInputTop)
		cancel()
		if err == nil {
			if td, ok := md.Topics[txnBadInputTop]; ok && td.Err == nil && len(td.Partitions) == 2 &&
				td.Partitions[0].Leader >= 0 && td.Partitions[1].Leader >= 0 &&
				td.Partitions[0].Err == nil && td.Partitions[1].Err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s has no leaders after 30s (%v)", txnBadInputTop, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	c := newTxnClient(t, addr, txnBadInputTop, "txn-warm-up", &transcript{})
	deadline = time.Now().Add(30 * time.Second)
	for _, find := range []struct {
		key  string
		kind int8
	}{{"txn-warm-up", 1}, {"group-warm-up", 0}} {
		for {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorKey = find.key
			req.CoordinatorType = find.kind
			resp := c.request(req, 2).(*kmsg.FindCoordinatorResponse)
			if resp.ErrorCode == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("FindCoordinator %q (type %d): %s after 30s", find.key, find.kind, codeName(resp.ErrorCode))
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for {
		code, _, _ := c.sendInit(txnInitV, txnTimeoutMs)
		if code == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("transactional InitProducerId: %s after 30s", codeName(code))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
