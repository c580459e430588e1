package replica

import (
	"bufio"
	"fmt"
	"github.com/kbroker/kbroker/logstore"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The scenario format (testdata/*.txt), one command per line, '#' starts a
// comment:
//
//	replicas 1 2 3 [min-isr=N] [lag=MS] [mode=fetch|ofle]
//	elect ID epoch=E isr=A,B [notify=C,D|notify=]  (default: all live replicas)
//	produce LABEL[xCOUNT] ... [acks=all]           (one batch per argument)
//	replicate ID                                   (one fetch round)
//	sync                                           (replicate until nothing changes)
//	crash ID [keep=N]                              (N batches survive)
//	restart ID
//	seed ID LABEL/eEPOCH ... [hw=N]                (set a down replica's log)
//	tick MS | shrink
//	expect log ID = BATCH ...        expect logs-equal ID ID ...
//	expect hw|leo|latest-epoch ID = N
//	expect cache ID = E:START ...    expect isr = A B ...
//	expect committed LABEL ...       (acks=all records below the leader's HW, in every live log)
//
// Without mode= in the replicas line a file runs in both modes, as Kafka
// runs its acceptance tests at the current IBP and at 2.6; mode= on any
// other line restricts that line to one mode.

func runScenarioFile(t *testing.T, name string) {
	t.Helper()
	path := "testdata/" + name + ".txt"
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	modes := []simMode{modeFetch, modeOffsetForLeaderEpoch}
	for _, l := range lines {
		if m, ok := optionIn(strings.Fields(stripComment(l)), "mode"); ok && strings.HasPrefix(strings.TrimSpace(l), "replicas") {
			modes = []simMode{simMode(m)}
		}
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			var c *simCluster
			for i, l := range lines {
				fields := strings.Fields(stripComment(l))
				if len(fields) == 0 {
					continue
				}
				if m, ok := optionIn(fields, "mode"); ok && fields[0] != "replicas" {
					if simMode(m) != mode {
						continue
					}
					fields = slices.DeleteFunc(fields, func(f string) bool { return strings.HasPrefix(f, "mode=") })
				}
				var err error
				c, err = step(c, mode, fields)
				if err != nil {
					t.Fatalf("%s:%d: %s: %v\ncluster: %s", path, i+1, strings.TrimSpace(l), err, describe(c))
				}
				if c != nil {
					if err := c.checkInvariants(); err != nil {
						t.Fatalf("%s:%d: %s: invariant: %v", path, i+1, strings.TrimSpace(l), err)
					}
				}
			}
		})
	}
}

func stripComment(l string) string {
	if i := strings.IndexByte(l, '#'); i >= 0 {
		return l[:i]
	}
	return l
}

func optionIn(fields []string, key string) (string, bool) {
	for _, f := range fields {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

func positional(fields []string) []string {
	var out []string
	for _, f := range fields[1:] {
		if !strings.Contains(f, "=") {
			out = append(out, f)
		}
	}
	return out
}

func parseID(s string) (int32, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err
}

func parseIDs(s string) ([]int32, error) {
	var out []int32
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		id, err := parseID(p)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func step(c *simCluster, mode simMode, fields []string) (*simCluster, error) {
	cmd, args := fields[0], positional(fields)
	if cmd != "replicas" && c == nil {
		return nil, fmt.Errorf("no replicas line yet")
	}
	id := func() (int32, error) {
		if len(args) == 0 {
			return 0, fmt.Errorf("missing replica id")
		}
		return parseID(args[0])
	}
	switch cmd {
	case "replicas":
		ids, err := parseIDs(strings.Join(args, ","))
		if err != nil {
			return nil, err
		}
		cfg := LeaderConfig{ReplicaLagTimeMax: DefaultReplicaLagTimeMax, MinInsyncReplicas: 1}
		if v, ok := optionIn(fields, "min-isr"); ok {
			cfg.MinInsyncReplicas, _ = strconv.Atoi(v)
		}
		if v, ok := optionIn(fields, "lag"); ok {
			n, _ := strconv.Atoi(v)
			cfg.ReplicaLagTimeMax = time.Duration(n) * time.Millisecond
		}
		return newSimCluster(ids, mode, cfg), nil
	case "elect":
		leader, err := id()
		if err != nil {
			return c, err
		}
		ev, _ := optionIn(fields, "epoch")
		epoch, err := parseID(ev)
		if err != nil {
			return c, fmt.Errorf("epoch: %v", err)
		}
		iv, _ := optionIn(fields, "isr")
		isr, err := parseIDs(iv)
		if err != nil {
			return c, err
		}
		notify := c.liveReplicas()
		if nv, ok := optionIn(fields, "notify"); ok {
			if notify, err = parseIDs(nv); err != nil {
				return c, err
			}
		}
		return c, c.elect(leader, epoch, isr, notify)
	case "produce":
		var batches []simBatch
		for _, a := range args {
			label, count := a, int64(1)
			if i := strings.LastIndexByte(a, 'x'); i > 0 {
				if n, err := strconv.ParseInt(a[i+1:], 10, 64); err == nil {
					label, count = a[:i], n
				}
			}
			batches = append(batches, simBatch{label: label, count: count})
		}
		acks, _ := optionIn(fields, "acks")
		return c, c.produce(batches, acks == "all")
	case "replicate":
		r, err := id()
		if err != nil {
			return c, err
		}
		err = c.replicate(r)
		c.now++
		return c, err
	case "sync":
		return c, c.sync()
	case "crash":
		r, err := id()
		if err != nil {
			return c, err
		}
		keep := -1
		if v, ok := optionIn(fields, "keep"); ok {
			keep, _ = strconv.Atoi(v)
		}
		return c, c.crash(r, keep)
	case "restart":
		r, err := id()
		if err != nil {
			return c, err
		}
		return c, c.restart(r)
	case "seed":
		return c, c.seed(fields, args)
	case "tick":
		n, err := strconv.ParseInt(args[0], 10, 64)
		c.now += n
		return c, err
	case "shrink":
		return c, c.shrink()
	case "expect":
		return c, c.expect(fields[1:])
	}
	return c, fmt.Errorf("unknown command %q", cmd)
}

func (c *simCluster) liveReplicas() []int32 {
	var out []int32
	for _, id := range c.order {
		if c.replicas[id].up {
			out = append(out, id)
		}
	}
	return out
}

// seed gives a replica a log directly (Kafka's fetcher tests build logs by
// hand): "seed ID a/e0 b/e2 [hw=N]", each a one-record batch; the cache is
// rebuilt from the batches as log recovery does.
func (c *simCluster) seed(fields, args []string) error {
	id, err := parseID(args[0])
	if err != nil {
		return err
	}
	r, err := c.replica(id)
	if err != nil {
		return err
	}
	r.log, r.cache = nil, logstore.NewEpochCache(nil)
	for _, a := range args[1:] {
		label, ev, ok := strings.Cut(a, "/e")
		if !ok {
			return fmt.Errorf("seed batch %q: want LABEL/eEPOCH", a)
		}
		e, err := parseID(ev)
		if err != nil {
			return err
		}
		b := simBatch{label: label, base: r.leo(), count: 1, epoch: e}
		r.log = append(r.log, b)
		r.cache.Assign(e, b.base)
	}
	r.hw = 0
	if v, ok := optionIn(fields, "hw"); ok {
		r.hw, _ = strconv.ParseInt(v, 10, 64)
	}
	return nil
}

func (c *simCluster) expect(f []string) error {
	what := f[0]
	rest := f[1:]
	var lhs, rhs []string
	if i := slices.Index(rest, "="); i >= 0 {
		lhs, rhs = rest[:i], rest[i+1:]
	} else {
		lhs = rest
	}
	one := func() (*simReplica, error) {
		if len(lhs) != 1 {
			return nil, fmt.Errorf("want one replica id")
		}
		id, err := parseID(lhs[0])
		if err != nil {
			return nil, err
		}
		return c.replica(id)
	}
	wantNum := func(got int64) error {
		want, err := strconv.ParseInt(strings.Join(rhs, ""), 10, 64)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("%s %s = %d, want %d", what, lhs[0], got, want)
		}
		return nil
	}
	switch what {
	case "log":
		r, err := one()
		if err != nil {
			return err
		}
		if got, want := r.logString(), strings.Join(rhs, " "); got != want {
			return fmt.Errorf("log %d = %q, want %q", r.id, got, want)
		}
	case "logs-equal":
		ids, err := parseIDs(strings.Join(lhs, ","))
		if err != nil {
			return err
		}
		first := c.replicas[ids[0]].logString()
		for _, id := range ids[1:] {
			if got := c.replicas[id].logString(); got != first {
				return fmt.Errorf("logs differ:\n  %d: %s\n  %d: %s", ids[0], first, id, got)
			}
		}
	case "hw", "leo", "latest-epoch":
		r, err := one()
		if err != nil {
			return err
		}
		switch what {
		case "hw":
			return wantNum(r.highWatermark())
		case "leo":
			return wantNum(r.leo())
		default:
			return wantNum(int64(r.cache.LatestEpoch()))
		}
	case "cache":
		r, err := one()
		if err != nil {
			return err
		}
		if got, want := entriesString(r.cache.Entries()), strings.Join(rhs, " "); got != want {
			return fmt.Errorf("cache %d = %q, want %q", r.id, got, want)
		}
	case "isr":
		l, err := c.leader()
		if err != nil {
			return err
		}
		want, err := parseIDs(strings.Join(rhs, ","))
		if err != nil {
			return err
		}
		got := l.leader.Isr()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("isr = %v, want %v", got, want)
		}
	case "committed":
		return c.expectCommitted(lhs)
	default:
		return fmt.Errorf("unknown expectation %q", what)
	}
	return nil
}

// expectCommitted: every acks=all record named is acknowledged (below the
// leader's HW, at the offset it was acknowledged at) and present at that
// offset in every live replica's log below its LEO.
func (c *simCluster) expectCommitted(labels []string) error {
	l, err := c.leader()
	if err != nil {
		return err
	}
	for _, label := range labels {
		next, ok := c.acked[label]
		if !ok {
			return fmt.Errorf("%s was not produced with acks=all", label)
		}
		if l.leader.HighWatermark() < next {
			return fmt.Errorf("%s (ends at %d) not committed: leader HW %d", label, next, l.leader.HighWatermark())
		}
		for _, id := range c.liveReplicas() {
			r := c.replicas[id]
			if !slices.ContainsFunc(r.log, func(b simBatch) bool { return b.label == label && b.next() == next }) {
				return fmt.Errorf("%s lost on replica %d: %s", label, id, r.logString())
			}
		}
	}
	return nil
}

// checkInvariants: logs have strictly increasing, contiguous offsets; epochs
// never decrease along a log; caches ascend; HW <= LEO.
func (c *simCluster) checkInvariants() error {
	for _, id := range c.order {
		r := c.replicas[id]
		for i := 1; i < len(r.log); i++ {
			if r.log[i].base != r.log[i-1].next() {
				return fmt.Errorf("replica %d: offsets not contiguous: %s", id, r.logString())
			}
			if r.log[i].epoch < r.log[i-1].epoch {
				return fmt.Errorf("replica %d: epochs go backwards: %s", id, r.logString())
			}
		}
		es := r.cache.Entries()
		for i := 1; i < len(es); i++ {
			if es[i].Epoch <= es[i-1].Epoch || es[i].StartOffset <= es[i-1].StartOffset {
				return fmt.Errorf("replica %d: cache not ascending: %s", id, entriesString(es))
			}
		}
		if hw := r.highWatermark(); hw > r.leo() {
			return fmt.Errorf("replica %d: HW %d > LEO %d", id, hw, r.leo())
		}
	}
	return nil
}

func describe(c *simCluster) string {
	if c == nil {
		return "<none>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "leader %d epoch %d isr %v", c.leaderID, c.epoch, c.isr)
	for _, id := range c.order {
		r := c.replicas[id]
		fmt.Fprintf(&b, "\n  %d up=%v hw=%d cache=[%s] log=[%s]", id, r.up, r.highWatermark(), entriesString(r.cache.Entries()), r.logString())
	}
	return b.String()
}

// entriesString renders entries as "e:start e:start".
func entriesString(es []logstore.EpochEntry) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", e.Epoch, e.StartOffset)
	}
	return b.String()
}
