package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kbroker/kbroker/compat/harness"
)

// chaosTxnLoop is the seeded chaos run's transactional copy loop: a feeder
// writes sequence-numbered records to an input topic with an idempotent
// acks=all producer, and a txnCopier (kgo.GroupTransactSession,
// read_committed, offsets committed in each transaction, every tenth
// transaction aborted on purpose) copies them to an output topic, both
// through the whole schedule. Afterwards read_committed must show the
// input exactly once, in order, and nothing an abort ended (checkTxnCopy):
// exactly-once holds through every fault, not only process kills
// (txn_chaos_test.go).
type chaosTxnLoop struct {
	cluster       *harness.Cluster
	seeds         []string
	feeder        *kgo.Client
	cancel        context.CancelFunc
	done          chan struct{}
	copier        *txnCopier
	mu            sync.Mutex
	sent, failed  int
	firstFailures []string
}

const (
	chaosTxnIn         = "chaos-txn-in"
	chaosTxnOut        = "chaos-txn-out"
	chaosTxnPartitions = 3
	// chaosTxnFeedEvery paces the feeder: 100 records a second, a tenth
	// of the main producer's, so the copy loop adds transactions to the
	// brokers' work without crowding out what the run measures.
	chaosTxnFeedEvery = 10 * time.Millisecond
)

// chaosTxnEnabled: CHAOS_TXN=0 leaves the loop out, to replay the
// workload of reports made before it existed.
func chaosTxnEnabled() bool { return os.Getenv("CHAOS_TXN") != "0" }

// startChaosTxnLoop creates the two topics (replication factor 3,
// min.insync.replicas 2), starts the feeder and the copier, and waits for
// the first committed transaction, which creates __transaction_state on
// the way, so that the first fault finds the loop running.
func startChaosTxnLoop(t *testing.T, c *harness.Cluster, seeds []string) *chaosTxnLoop {
	t.Helper()
	createTopic(t, c, chaosTxnIn, chaosTxnPartitions, 3, minISR2)
	createTopic(t, c, chaosTxnOut, chaosTxnPartitions, 3, minISR2)
	l := &chaosTxnLoop{
		cluster: c,
		seeds:   seeds,
		feeder:  newClient(t, seeds, chaosAcksAllOpts(chaosTxnIn)...),
		done:    make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.feed(ctx)
	// No end yet: the input grows until the schedule is over.
	l.copier = startTxnCopier(t, seeds, chaosTxnIn, chaosTxnOut, "chaos-txn-group", "chaos-txn-copier", 1<<62)
	l.copier.waitCommitted(t, 1, 90*time.Second)
	return l
}

func (l *chaosTxnLoop) feed(ctx context.Context) {
	defer close(l.done)
	tick := time.NewTicker(chaosTxnFeedEvery)
	defer tick.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r := &kgo.Record{Partition: int32(seq % chaosTxnPartitions), Value: fmt.Appendf(nil, "txn-%08d", seq)}
		l.mu.Lock()
		l.sent++
		l.mu.Unlock()
		l.feeder.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			if err == nil {
				return
			}
			// A failed record may still be in the input log; the copy
			// is checked against the log, not against the acks.
			l.mu.Lock()
			defer l.mu.Unlock()
			l.failed++
			if len(l.firstFailures) < 3 {
				l.firstFailures = append(l.firstFailures, err.Error())
			}
		})
	}
}

// finish closes the input, lets the copier copy the rest (bounded), and
// checks the output against the input log. It returns the records
// read_committed shows and the problems found, each also a test error.
func (l *chaosTxnLoop) finish(t *testing.T) (copied int, problems []string) {
	t.Helper()
	l.cancel()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := l.feeder.Flush(ctx); err != nil {
		t.Errorf("transactional loop: flushing the input feeder: %v", err)
	}
	l.mu.Lock()
	t.Logf("transactional loop: %d input records sent, %d failed %v", l.sent, l.failed, l.firstFailures)
	l.mu.Unlock()

	// The input holds no transactions: its LSO is its HW.
	inEnds := lastStableOffsets(t, l.seeds, chaosTxnIn, 60*time.Second)
	input := map[int32][]string{}
	total := 0
	inputLog := readTxnLog(t, l.seeds, chaosTxnIn, inEnds, kgo.ReadUncommitted())
	for p, recs := range inputLog {
		for _, r := range recs {
			if !r.Control {
				input[p] = append(input[p], r.Value)
				total++
			}
		}
	}
	for p := range int32(chaosTxnPartitions) {
		if _, ok := input[p]; !ok {
			input[p] = nil
		}
	}
	l.copier.setTotal(total)
	l.copier.wait(t, 3*time.Minute)

	outEnds := lastStableOffsets(t, l.seeds, chaosTxnOut, 60*time.Second)
	committedView := readTxnLog(t, l.seeds, chaosTxnOut, outEnds, kgo.ReadCommitted())
	fullLog := readTxnLog(t, l.seeds, chaosTxnOut, outEnds, kgo.ReadUncommitted())
	problems, summary := checkTxnCopy(input, committedView, fullLog)
	for _, pr := range problems {
		t.Errorf("transactional loop: %s", pr)
	}
	if len(problems) > 0 {
		l.explainMissing(t, inputLog, committedView, fullLog)
		l.keepTxnLogs(t)
	}
	for _, recs := range committedView {
		for _, r := range recs {
			if !r.Control {
				copied++
			}
		}
	}
	t.Logf("transactional loop: %d input records; output: %s; copier: %s", total, summary, l.copier.summary())
	return copied, problems
}

// explainMissing logs, for each input record read_committed does not show
// in the output, where it is in the output log (absent, or at which
// offset, of which producer, and how its transaction ended) and every
// transaction of the copier that copied it.
func (l *chaosTxnLoop) explainMissing(t *testing.T, inputLog, committedView, fullLog map[int32][]txnLogRecord) {
	t.Helper()
	for p, in := range inputLog {
		shown := map[string]bool{}
		for _, r := range committedView[p] {
			shown[r.Value] = true
		}
		outcome := classifyTxnLog(fullLog[p])
		inLog := map[string][]txnLogRecord{}
		for _, r := range fullLog[p] {
			if !r.Control {
				inLog[r.Value] = append(inLog[r.Value], r)
			}
		}
		for _, r := range in {
			if r.Control || shown[r.Value] {
				continue
			}
			where := "absent from the output log"
			if copies := inLog[r.Value]; len(copies) > 0 {
				var at []string
				for _, c := range copies {
					state := "undecided"
					switch {
					case outcome.committed[c.Offset]:
						state = "committed"
					case outcome.aborted[c.Offset]:
						state = "aborted"
					}
					at = append(at, fmt.Sprintf("offset %d (producer %d, %s)", c.Offset, c.ProducerID, state))
				}
				where = "in the output log at " + strings.Join(at, ", ")
			}
			t.Logf("transactional loop: %s (input partition %d offset %d) missing: %s; copied by: %v",
				r.Value, p, r.Offset, where, l.copier.journalCovering(p, r.Offset))
		}
	}
}

// keepTxnLogs keeps (KBROKER_KEEP_LOGS) every broker's replicas of the
// loop's topics and of the internal topics that decided its transactions.
func (l *chaosTxnLoop) keepTxnLogs(t *testing.T) {
	t.Helper()
	for _, b := range l.cluster.Brokers {
		entries, err := os.ReadDir(b.LogDir)
		if err != nil {
			t.Logf("keeping %s: %v", b.LogDir, err)
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() && (strings.HasPrefix(name, "chaos-txn-") || strings.HasPrefix(name, "__consumer_offsets-") || strings.HasPrefix(name, "__transaction_state-")) {
				harness.KeepDir(t, filepath.Join(b.LogDir, name), fmt.Sprintf("broker-%d/%s", b.ID, name))
			}
		}
	}
}
