package compat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testCtx is a context bounded by d and cancelled when the test ends.
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newAdmin(t *testing.T, addr string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(newClient(t, addr))
}

// createTopic creates a topic with replication factor 1 and fails the test
// on any error, including a per-topic one.
func createTopic(t *testing.T, addr, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	resp, err := newAdmin(t, addr).CreateTopic(ctx, partitions, 1, configs, topic)
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if resp.Err != nil {
		t.Fatalf("create topic %s: %v (%s)", topic, resp.Err, resp.ErrMessage)
	}
}

// produceSync produces records with acks=all and fails on any error.
func produceSync(t *testing.T, cl *kgo.Client, recs ...*kgo.Record) {
	t.Helper()
	ctx := testCtx(t, 60*time.Second)
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// consumeN reads exactly n records of topic from the start of every
// partition, without a group, within timeout.
func consumeN(t *testing.T, addr, topic string, n int, timeout time.Duration, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)
	cl := newClient(t, addr, opts...)
	ctx := testCtx(t, timeout)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consume %s: got %d of %d records within %v", topic, len(out), n, timeout)
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Errorf("fetch %s[%d]: %v", topic, p, err)
		})
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	cl.Close()
	if len(out) != n {
		t.Fatalf("consume %s: got %d records, want exactly %d", topic, len(out), n)
	}
	return out
}

// segmentName is Kafka's segment file name: the base offset in 20 digits.
var segmentName = regexp.MustCompile(`^[0-9]{20}\.log$`)

// segmentFiles lists every .log segment under a broker's log dir.
func segmentFiles(t *testing.T, logDir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(logDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && segmentName.MatchString(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// dumpSegments runs kafka-dump-log --print-data-log on every segment,
// requires exit 0 for each and returns the concatenated output.
func dumpSegments(t *testing.T, logDir string) string {
	t.Helper()
	files := segmentFiles(t, logDir)
	if len(files) == 0 {
		t.Fatalf("no .log segments under %s", logDir)
	}
	var all strings.Builder
	for _, f := range files {
		ctx := testCtx(t, 2*time.Minute)
		out, errOut, err := harness.RunTool(t, ctx, "kafka-dump-log", "--files", f, "--print-data-log")
		if err != nil {
			t.Errorf("kafka-dump-log %s: %v\n%s", f, err, errOut)
			continue
		}
		// DumpLogSegments reports unreadable batches in its output rather
		// than in its exit code.
		for _, bad := range []string{"isvalid: false", "invalid bytes", "Found invalid messages", "Exception"} {
			if strings.Contains(out, bad) || strings.Contains(errOut, bad) {
				t.Errorf("kafka-dump-log %s reports %q:\n%s\n%s", f, bad, tail(out, 2000), errOut)
			}
		}
		all.WriteString(out)
	}
	return all.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

func seqValue(i int) []byte { return fmt.Appendf(nil, "%08d", i) }
