package compat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
)

// TestKcatCodecs produces with kcat (librdkafka) in each compression codec
// and consumes the lines back with kcat, in order.
func TestKcatCodecs(t *testing.T) {
	b := harness.StartBroker(t)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t.Run(codec, func(t *testing.T) {
			topic := "kcat-" + codec
			createTopic(t, b.Addr, topic, 1, nil)
			const n = 2000
			var in strings.Builder
			for i := 0; i < n; i++ {
				fmt.Fprintf(&in, "%s-%05d-%s\n", codec, i, strings.Repeat("x", i%50))
			}
			ctx := testCtx(t, time.Minute)
			if out, errOut, err := harness.Kcat(t, ctx, strings.NewReader(in.String()),
				"-P", "-b", b.Addr, "-t", topic, "-z", codec, "-X", "acks=all"); err != nil {
				t.Fatalf("kcat -P: %v\n%s\n%s", err, out, errOut)
			}
			out, errOut, err := harness.Kcat(t, ctx, nil, "-C", "-b", b.Addr, "-t", topic,
				"-o", "beginning", "-e", "-q", "-c", fmt.Sprint(n))
			if err != nil {
				t.Fatalf("kcat -C: %v\n%s", err, errOut)
			}
			if out != in.String() {
				got := strings.Split(out, "\n")
				t.Fatalf("kcat -C read %d lines, differing from the %d produced; first: %q",
					len(got)-1, n, got[0])
			}
		})
	}
}

func TestKcatMetadata(t *testing.T) {
	b := harness.StartBroker(t)
	createTopic(t, b.Addr, "kcat-meta", 3, nil)
	ctx := testCtx(t, time.Minute)
	out, errOut, err := harness.Kcat(t, ctx, nil, "-L", "-b", b.Addr)
	if err != nil {
		t.Fatalf("kcat -L: %v\n%s", err, errOut)
	}
	for _, want := range []string{
		"1 brokers:",
		"broker 0 at " + b.Addr,
		`topic "kcat-meta" with 3 partitions:`,
		"partition 0, leader 0, replicas: 0, isrs: 0",
		"partition 2, leader 0, replicas: 0, isrs: 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kcat -L lacks %q:\n%s", want, out)
		}
	}
}
