package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnCopier is a consume-transform-produce loop, the shape of every
// exactly-once stream processor: one kgo.GroupTransactSession reads the
// input topic (read_committed, group offsets sent with each transaction
// through TxnOffsetCommit) and writes each record's value unchanged to the
// same partition number of the output topic. Every deliberateAbortEvery-th
// transaction is flushed and then aborted on purpose, so the output log
// always holds aborted records for read_committed to hide.
//
// gate bounds how many records the copier commits before it waits: the
// chaos driver opens the next stretch just before each fault, so every
// fault lands while transactions are running rather than after the copy.
type txnCopier struct {
	seeds                       []string
	input, output, group, txnID string
	// total is the records in the input: the copy is complete when that
	// many are committed. A copier of a growing input starts with no end
	// and is given one when its input is closed (setTotal).
	total                        atomic.Int64
	gate                         atomic.Int64
	cancel                       context.CancelFunc
	done                         chan struct{}
	deliberateAbortEvery, perTxn int

	mu sync.Mutex
	// commits are the ends of committed transactions, in order: when,
	// and the records committed by then.
	commits          []txnCommit
	committed        int
	deliberateAborts int
	abortedRecords   int // flushed before a deliberate abort
	failedEnds       int // transactions that ended in an abort the copier did not ask for
	sessions         int
	errs             map[string]int // error text -> count
	finishedBy       string         // how the copier knew the copy was complete
	// journal is every transaction the copier ended, in order: the
	// evidence for a copy that comes out wrong.
	journal []txnJournalEntry
}

// txnJournalEntry is one ended transaction: when it ended, in which
// session, the input offsets it copied (first and last, by partition) and
// how it ended.
type txnJournalEntry struct {
	at      time.Time
	session int
	inputs  map[int32][2]int64
	outcome string
}

func (e txnJournalEntry) String() string {
	return fmt.Sprintf("%s session %d inputs %v: %s", e.at.UTC().Format("15:04:05.000"), e.session, e.inputs, e.outcome)
}

func endName(end kgo.TransactionEndTry) string {
	if end == kgo.TryCommit {
		return "commit"
	}
	return "abort"
}

// journalCovering lists the transactions that copied input offset off of
// partition p.
func (c *txnCopier) journalCovering(p int32, off int64) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, e := range c.journal {
		if r, ok := e.inputs[p]; ok && r[0] <= off && off <= r[1] {
			out = append(out, e.String())
		}
	}
	return out
}

type txnCommit struct {
	at      time.Time
	records int
}

// txnCopierTimeout is transaction.timeout.ms: a transaction whose
// producer vanished without a new session fencing it is aborted by its
// coordinator after this long, well inside the test's bounds.
const txnCopierTimeout = 20 * time.Second

func startTxnCopier(t *testing.T, seeds []string, input, output, group, txnID string, total int) *txnCopier {
	t.Helper()
	c := &txnCopier{
		seeds: seeds, input: input, output: output, group: group, txnID: txnID,
		done: make(chan struct{}), deliberateAbortEvery: 10, perTxn: 500,
		errs: map[string]int{},
	}
	c.total.Store(int64(total))
	c.gate.Store(int64(total))
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.run(ctx)
	t.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}

func (c *txnCopier) newSession() (*kgo.GroupTransactSession, error) {
	return kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.seeds...),
		kgo.TransactionalID(c.txnID),
		kgo.TransactionTimeout(txnCopierTimeout),
		kgo.ConsumerGroup(c.group),
		kgo.ConsumeTopics(c.input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// kgo's group consumers always fetch offsets with RequireStable
		// (KIP-447): a rebalance waits for a pending transactional commit.
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(250*time.Millisecond),
		// With the input's small batches, a fetch brings a batch or two
		// of every partition, so a transaction spans several output
		// partitions and its markers go to several leaders.
		kgo.FetchMaxPartitionBytes(4<<10),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(30*time.Second),
		kgo.MetadataMinAge(250*time.Millisecond),
	)
}

func (c *txnCopier) noteErr(what string, err error) {
	c.mu.Lock()
	c.errs[what+": "+err.Error()]++
	c.mu.Unlock()
}

func (c *txnCopier) run(ctx context.Context) {
	defer close(c.done)
	var s *kgo.GroupTransactSession
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	// Ending a session on any error and starting a new one with the same
	// transactional id is the documented recovery: InitProducerId bumps the
	// epoch, fencing the old producer, and aborts its open transaction.
	drop := func() {
		s.Close()
		s = nil
	}
	lastOffsetsCheck := time.Now()
	for txn := 0; ctx.Err() == nil; {
		if s == nil {
			var err error
			if s, err = c.newSession(); err != nil {
				c.noteErr("new session", err)
				sleepCtx(ctx, 500*time.Millisecond)
				continue
			}
			c.mu.Lock()
			c.sessions++
			c.mu.Unlock()
		}
		if n := int64(c.committedRecords()); n >= c.gate.Load() && n < c.total.Load() {
			sleepCtx(ctx, 20*time.Millisecond)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := s.PollRecords(pctx, c.perTxn)
		cancel()
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				c.noteErr("fetch", err)
			}
		})
		recs := fs.Records()
		if len(recs) == 0 {
			if c.finished(ctx, &lastOffsetsCheck) {
				return
			}
			continue
		}
		abort := txn%c.deliberateAbortEvery == c.deliberateAbortEvery-1
		txn++
		if !c.copyOne(ctx, s, recs, abort) {
			drop()
		}
	}
}

// copyOne runs one transaction over recs; false means the session must be
// replaced.
func (c *txnCopier) copyOne(ctx context.Context, s *kgo.GroupTransactSession, recs []*kgo.Record, abort bool) bool {
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := s.Begin(); err != nil {
		c.noteErr("begin", err)
		return false
	}
	var produceErrs atomic.Int64
	for _, r := range recs {
		s.Produce(tctx, &kgo.Record{Topic: c.output, Partition: r.Partition, Value: r.Value}, func(_ *kgo.Record, err error) {
			if err != nil {
				produceErrs.Add(1)
				c.noteErr("produce", err)
			}
		})
	}
	// Every produce result is in before choosing how to end: a record
	// the broker refused (TRANSACTION_ABORTABLE from a partition whose
	// leader could not verify the transaction, say) is failed by kgo
	// without failing the transaction, and End(TryCommit) would then
	// commit the transaction without it while the group offsets move
	// past it. Deciding on the errors seen before End's own flush did
	// exactly that. The flush also puts the records of a deliberate
	// abort in the log, where read_committed must hide them; an abort
	// of buffered records would write nothing.
	if err := s.Client().Flush(tctx); err != nil {
		c.noteErr("flush", err)
		return false
	}
	end := kgo.TryCommit
	if abort || produceErrs.Load() > 0 {
		end = kgo.TryAbort
	}
	committed, err := s.End(tctx, end)
	c.mu.Lock()
	defer c.mu.Unlock()
	var outcome string
	keep := true
	switch {
	case err != nil:
		c.errs["end: "+err.Error()]++
		c.failedEnds++
		outcome = fmt.Sprintf("end failed (trying to %s, %d produce errors): %v", endName(end), produceErrs.Load(), err)
		keep = false
	case committed:
		c.committed += len(recs)
		c.commits = append(c.commits, txnCommit{time.Now(), c.committed})
		outcome = "committed"
	case abort && produceErrs.Load() == 0:
		c.deliberateAborts++
		c.abortedRecords += len(recs)
		outcome = "aborted on purpose"
	default:
		c.failedEnds++
		outcome = fmt.Sprintf("aborted (trying to %s, %d produce errors)", endName(end), produceErrs.Load())
	}
	c.journal = append(c.journal, txnJournalEntry{at: time.Now(), session: c.sessions, inputs: inputSpans(recs), outcome: outcome})
	return keep
}

// inputSpans is the first and last input offset of recs, by partition.
func inputSpans(recs []*kgo.Record) map[int32][2]int64 {
	spans := map[int32][2]int64{}
	for _, r := range recs {
		span, ok := spans[r.Partition]
		if !ok {
			span = [2]int64{r.Offset, r.Offset}
		}
		spans[r.Partition] = [2]int64{min(span[0], r.Offset), max(span[1], r.Offset)}
	}
	return spans
}

// finished reports, after an empty poll, whether the whole input is
// copied: by the copier's own count, or (every 3 s) by the group's
// committed offsets, which also covers a commit whose answer was lost.
func (c *txnCopier) finished(ctx context.Context, lastCheck *time.Time) bool {
	if int64(c.committedRecords()) >= c.total.Load() {
		c.mu.Lock()
		c.finishedBy = "the copier's count of committed records"
		c.mu.Unlock()
		return true
	}
	if time.Since(*lastCheck) < 3*time.Second {
		return false
	}
	*lastCheck = time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seeds...))
	if err != nil {
		return false
	}
	defer cl.Close()
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(octx, c.group)
	if err != nil || offs.Error() != nil {
		return false
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == c.input {
			sum += o.At
		}
	})
	if sum < c.total.Load() {
		return false
	}
	c.mu.Lock()
	c.finishedBy = fmt.Sprintf("the group's committed offsets (%d), the copier counted %d", sum, c.committed)
	c.mu.Unlock()
	return true
}

// setTotal ends a copy of an input that grew until now: complete at n
// records committed, with no gate short of that.
func (c *txnCopier) setTotal(n int) {
	c.total.Store(int64(n))
	c.gate.Store(int64(n))
}

func (c *txnCopier) committedRecords() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed
}

func (c *txnCopier) errCounts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.errs)
}

// waitCommitted waits until at least n records are committed, failing
// the test after timeout with the copier's errors. A copier that finished
// by the group's committed offsets has copied everything even if its own
// count is short: a commit whose EndTxn answer was lost (the coordinator
// killed after writing the marker, kgo's retry unable to dial) counts as
// failed in the copier and as done in the log. verifyTxnCopy then shows
// whether the copy is really whole.
func (c *txnCopier) waitCommitted(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for c.committedRecords() < n {
		select {
		case <-c.done:
			if c.committedRecords() >= n {
				return
			}
			c.mu.Lock()
			by := c.finishedBy
			c.mu.Unlock()
			if by != "" {
				t.Logf("copier finished by %s before counting %d committed records", by, n)
				return
			}
			t.Fatalf("copier stopped at %d committed records, want %d; %s", c.committedRecords(), n, c.summary())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records committed within %v; %s; %s", c.committedRecords(), n, timeout, c.summary(), c.coordinators())
		}
	}
}

// wait waits (bounded) until the copier saw the whole input copied.
func (c *txnCopier) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.cancel()
		<-c.done
		t.Fatalf("copy not finished within %v: %s", timeout, c.summary())
	}
	t.Logf("copy finished (by %s): %s", c.finishedBy, c.summary())
}

// coordinators is what each seed broker answers FindCoordinator for the
// copier's transactional id and group: kgo retries a missing coordinator
// silently until the transaction's context expires, so a stuck copy says
// why here.
func (c *txnCopier) coordinators() string {
	var out []string
	for _, addr := range c.seeds {
		txn, terr := findCoordinator(addr, c.txnID, 1)
		grp, gerr := findCoordinator(addr, c.group, 0)
		out = append(out, fmt.Sprintf("via %s: transaction coordinator %d (%v), group coordinator %d (%v)", addr, txn, terr, grp, gerr))
	}
	return "FindCoordinator " + strings.Join(out, "; ")
}

func (c *txnCopier) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []string
	for e, n := range c.errs {
		errs = append(errs, fmt.Sprintf("%d× %s", n, e))
	}
	sort.Strings(errs)
	return fmt.Sprintf("%d records in %d committed transactions, %d deliberate aborts (%d records), %d other aborted or failed ends, %d sessions; errors: %v",
		c.committed, len(c.commits), c.deliberateAborts, c.abortedRecords, c.failedEnds, c.sessions, errs)
}

// stall is the longest time without a committed transaction between from
// and to, counting from from itself: how long a fault stopped the copy.
// first is the time from from to the first commit after it.
func (c *txnCopier) stall(from, to time.Time) (longest, first time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := from
	first = -1
	for _, cm := range c.commits {
		if cm.at.Before(from) || cm.at.After(to) {
			continue
		}
		if first < 0 {
			first = cm.at.Sub(from)
		}
		longest = max(longest, cm.at.Sub(prev))
		prev = cm.at
	}
	return longest, first
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// produceTxnInput writes n records valued "<prefix>-<seq>" round-robin
// over partitions with an idempotent acks=all producer and returns each
// partition's values in offset order.
func produceTxnInput(t *testing.T, seeds []string, topic, prefix string, partitions int32, n int) map[int32][]string {
	t.Helper()
	cl := newClient(t, seeds, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(4<<10))
	byPartition := map[int32][]string{}
	const chunk = 10000
	for from := 0; from < n; from += chunk {
		var recs []*kgo.Record
		for seq := from; seq < min(n, from+chunk); seq++ {
			recs = append(recs, &kgo.Record{Partition: int32(seq) % partitions, Value: fmt.Appendf(nil, "%s-%06d", prefix, seq)})
		}
		if err := cl.ProduceSync(testCtx(t, 60*time.Second), recs...).FirstErr(); err != nil {
			t.Fatalf("produce input %s: %v", topic, err)
		}
		for _, r := range recs {
			byPartition[r.Partition] = append(byPartition[r.Partition], string(r.Value))
		}
	}
	// ProduceSync returns records in the order given; per partition that
	// is offset order, which the offsets themselves confirm.
	return byPartition
}

// txnLogRecord is one record of a partition as a consumer returned it,
// control records included.
type txnLogRecord struct {
	Offset     int64
	Value      string
	ProducerID int64
	Control    bool
	Commit     bool // for a control record: COMMIT (type 1) rather than ABORT (type 0)
	Txn        bool // in a transactional batch
}

// readTxnLog reads every partition of topic from offset 0 up to ends
// with the given isolation level, control records kept (kgo advances past
// them either way; keeping them lets the reader reach the end offset,
// which is usually a marker).
func readTxnLog(t *testing.T, seeds []string, topic string, ends map[int32]int64, iso kgo.IsolationLevel) map[int32][]txnLogRecord {
	t.Helper()
	start := map[int32]kgo.Offset{}
	for p := range ends {
		start[p] = kgo.NewOffset().At(0)
	}
	cl := newClient(t, seeds, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(), kgo.FetchMaxWait(250*time.Millisecond))
	next := map[int32]int64{}
	out := map[int32][]txnLogRecord{}
	ctx := testCtx(t, 60*time.Second)
	for {
		done := true
		for p, e := range ends {
			done = done && next[p] >= e
		}
		if done {
			return out
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			t.Fatalf("read %s: reached %v of %v within 60s", topic, next, ends)
		}
		fs.EachError(func(tp string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Logf("fetch %s/%d: %v", tp, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < next[r.Partition] {
				t.Errorf("%s/%d: offset %d after %d", topic, r.Partition, r.Offset, next[r.Partition]-1)
			}
			next[r.Partition] = r.Offset + 1
			lr := txnLogRecord{Offset: r.Offset, Value: string(r.Value), ProducerID: r.ProducerID,
				Control: r.Attrs.IsControl(), Txn: r.Attrs.IsTransactional()}
			// A control record's key is version int16, type int16
			// (Kafka's ControlRecordType: 0 ABORT, 1 COMMIT).
			if lr.Control && len(r.Key) >= 4 {
				lr.Commit = r.Key[2] == 0 && r.Key[3] == 1
			}
			out[r.Partition] = append(out[r.Partition], lr)
		})
	}
}

// txnOutcome classifies the data records of a read_uncommitted log by the
// marker that ended their transaction: offset -> committed.
type txnOutcome struct {
	committed, aborted map[int64]bool
	open               []int64 // transactional records no marker ended
	plain              []int64 // non-transactional records
}

// classifyTxnLog walks a partition in offset order: a producer's
// transactional records belong to the transaction its next control
// record ends.
func classifyTxnLog(log []txnLogRecord) txnOutcome {
	o := txnOutcome{committed: map[int64]bool{}, aborted: map[int64]bool{}}
	pending := map[int64][]int64{}
	for _, r := range log {
		switch {
		case r.Control:
			for _, off := range pending[r.ProducerID] {
				if r.Commit {
					o.committed[off] = true
				} else {
					o.aborted[off] = true
				}
			}
			delete(pending, r.ProducerID)
		case r.Txn:
			pending[r.ProducerID] = append(pending[r.ProducerID], r.Offset)
		default:
			o.plain = append(o.plain, r.Offset)
		}
	}
	for _, offs := range pending {
		o.open = append(o.open, offs...)
	}
	slices.Sort(o.open)
	return o
}

// checkTxnCopy is the exactly-once verdict on the output topic, as a
// list of problems (none when it holds):
//   - read_committed shows each partition's input values exactly once, in
//     input order (one producer, one transaction at a time, so order is
//     kept), and nothing else;
//   - every record read_committed shows was committed by a COMMIT marker,
//     none by an ABORT marker; every committed record is shown;
//   - aborted records exist (the copier's deliberate aborts), so the
//     previous point was tested; no transaction is left open.
func checkTxnCopy(input map[int32][]string, committedView, fullLog map[int32][]txnLogRecord) (problems []string, summary string) {
	var aborted, committedRecs, visible int
	for _, p := range slices.Sorted(maps.Keys(input)) {
		o := classifyTxnLog(fullLog[p])
		aborted += len(o.aborted)
		committedRecs += len(o.committed)
		if len(o.open) > 0 || len(o.plain) > 0 {
			problems = append(problems, fmt.Sprintf("output partition %d: %d transactional records no marker ended (first offsets %v), %d non-transactional records",
				p, len(o.open), o.open[:min(5, len(o.open))], len(o.plain)))
		}
		var got []string
		var abortedSeen, unmarked []int64
		for _, r := range committedView[p] {
			if r.Control {
				continue
			}
			got = append(got, r.Value)
			if o.aborted[r.Offset] {
				abortedSeen = append(abortedSeen, r.Offset)
			} else if !o.committed[r.Offset] {
				unmarked = append(unmarked, r.Offset)
			}
		}
		visible += len(got)
		if len(abortedSeen) > 0 {
			problems = append(problems, fmt.Sprintf("output partition %d: read_committed returned %d records of aborted transactions, offsets %v…",
				p, len(abortedSeen), abortedSeen[:min(5, len(abortedSeen))]))
		}
		if len(unmarked) > 0 {
			problems = append(problems, fmt.Sprintf("output partition %d: read_committed returned %d records no COMMIT marker covers, offsets %v…",
				p, len(unmarked), unmarked[:min(5, len(unmarked))]))
		}
		if shown := len(got) - len(abortedSeen) - len(unmarked); shown != len(o.committed) {
			problems = append(problems, fmt.Sprintf("output partition %d: %d records committed by a marker in the log, read_committed returned %d of them",
				p, len(o.committed), shown))
		}
		if pr := compareCopy(p, input[p], got); pr != "" {
			problems = append(problems, pr)
		}
	}
	for p := range committedView {
		if _, ok := input[p]; !ok {
			problems = append(problems, fmt.Sprintf("output partition %d has records but the input has no such partition", p))
		}
	}
	if aborted == 0 {
		problems = append(problems, "no aborted record in the output log, although the copier aborted transactions after flushing them")
	}
	return problems, fmt.Sprintf("%d records visible to read_committed, %d committed and %d aborted records in the log", visible, committedRecs, aborted)
}

// compareCopy reports missing, duplicated and foreign values of one
// partition, or else the first place its order departs from the input's.
func compareCopy(p int32, want, got []string) string {
	count := map[string]int{}
	for _, v := range got {
		count[v]++
	}
	wantSet := map[string]bool{}
	var missing, dup []string
	for _, v := range want {
		wantSet[v] = true
		switch n := count[v]; {
		case n == 0:
			missing = append(missing, v)
		case n > 1:
			dup = append(dup, fmt.Sprintf("%s×%d", v, n))
		}
	}
	var foreign []string
	for v := range count {
		if !wantSet[v] {
			foreign = append(foreign, v)
		}
	}
	sort.Strings(foreign)
	ex := func(l []string) []string { return l[:min(5, len(l))] }
	if len(missing)+len(dup)+len(foreign) > 0 {
		return fmt.Sprintf("output partition %d: of %d input records %d missing %v, %d more than once %v; %d values not in the input %v",
			p, len(want), len(missing), ex(missing), len(dup), ex(dup), len(foreign), ex(foreign))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Sprintf("output partition %d: record %d is %s, the input has %s there (order changed)", p, i, got[i], want[i])
		}
	}
	return ""
}

// lastStableOffsets waits until every partition's last stable offset
// (ListOffsets read_committed) equals its high watermark, no transaction
// left open, and returns them.
func lastStableOffsets(t *testing.T, seeds []string, topic string, timeout time.Duration) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(newClient(t, seeds))
	var out map[int32]int64
	waitUntil(t, timeout, "LSO = HW on every partition of "+topic, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hw, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			return err
		}
		lso, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return err
		}
		out = map[int32]int64{}
		var ferr error
		hw.Each(func(o kadm.ListedOffset) {
			l, ok := lso.Lookup(topic, o.Partition)
			switch {
			case o.Err != nil:
				ferr = fmt.Errorf("partition %d HW: %w", o.Partition, o.Err)
			case !ok || l.Err != nil:
				ferr = fmt.Errorf("partition %d LSO: %v", o.Partition, l.Err)
			case l.Offset != o.Offset:
				ferr = fmt.Errorf("partition %d: LSO %d, HW %d", o.Partition, l.Offset, o.Offset)
			}
			out[o.Partition] = o.Offset
		})
		return ferr
	})
	return out
}

// verifyTxnCopy reads the output both ways and checks it against input.
func verifyTxnCopy(t *testing.T, seeds []string, output string, input map[int32][]string) {
	t.Helper()
	ends := lastStableOffsets(t, seeds, output, 60*time.Second)
	t.Logf("output %s end offsets (LSO = HW): %v", output, ends)
	committedView := readTxnLog(t, seeds, output, ends, kgo.ReadCommitted())
	fullLog := readTxnLog(t, seeds, output, ends, kgo.ReadUncommitted())
	problems, summary := checkTxnCopy(input, committedView, fullLog)
	for _, pr := range problems {
		t.Error(pr)
	}
	t.Logf("output %s: %s", output, summary)
}

// The journal names the transactions that copied an input offset, so a
// record missing from the output can be traced to how its copies ended.
func TestTxnJournalCovering(t *testing.T) {
	c := &txnCopier{journal: []txnJournalEntry{
		{session: 1, inputs: map[int32][2]int64{0: {10, 14}, 2: {7, 9}}, outcome: "aborted on purpose"},
		{session: 1, inputs: map[int32][2]int64{0: {10, 14}}, outcome: "committed"},
		{session: 2, inputs: map[int32][2]int64{2: {10, 12}}, outcome: "committed"},
	}}
	if got := c.journalCovering(0, 12); len(got) != 2 || !strings.HasSuffix(got[0], "aborted on purpose") || !strings.HasSuffix(got[1], "committed") {
		t.Errorf("partition 0 offset 12: %q", got)
	}
	if got := c.journalCovering(2, 9); len(got) != 1 || !strings.Contains(got[0], "session 1") {
		t.Errorf("partition 2 offset 9: %q", got)
	}
	if got := c.journalCovering(1, 9); len(got) != 0 {
		t.Errorf("partition 1 offset 9: %q", got)
	}
}
