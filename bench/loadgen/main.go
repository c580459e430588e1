package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type options struct {
	bootstrap string
	topic     string
	rate      int
	size      int
	acks      string
	duration  time.Duration
	warmup    time.Duration
	drain     time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.bootstrap, "bootstrap", "127.0.0.1:9092", "comma-separated seed brokers")
	flag.StringVar(&o.topic, "topic", "", "topic to produce to and consume from (must exist and be empty)")
	flag.IntVar(&o.rate, "rate", 10000, "records per second")
	flag.IntVar(&o.size, "size", 1024, "record value size in bytes (at least 8)")
	flag.StringVar(&o.acks, "acks", "1", "producer acks: 1 or all")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "how long to produce, warm-up included")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "records scheduled before this are not measured")
	flag.DurationVar(&o.drain, "drain", 10*time.Second, "how long to wait for the last records after producing stops")
	flag.Parse()
	if err := o.check(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	res, err := run(context.Background(), o)
	if err != nil {
		slog.Error("loadgen failed", "err", err)
		os.Exit(1)
	}
	fmt.Println(res)
}

func (o options) check() error {
	switch {
	case o.topic == "":
		return errors.New("-topic is required")
	case o.rate <= 0:
		return errors.New("-rate must be positive")
	case o.size < 8:
		return errors.New("-size must be at least 8: the send time travels in the value")
	case o.acks != "1" && o.acks != "all":
		return errors.New("-acks must be 1 or all")
	case o.warmup >= o.duration:
		return errors.New("-warmup must be shorter than -duration")
	}
	return nil
}

type result struct {
	sent, received, errors int64
	elapsed                time.Duration
	size                   int
	q                      []time.Duration
}

func (r result) String() string {
	secs := r.elapsed.Seconds()
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }
	return fmt.Sprintf("sent=%d received=%d errors=%d mbps=%.2f rps=%.1f p50_ms=%s p99_ms=%s p999_ms=%s max_ms=%s",
		r.sent, r.received, r.errors, float64(r.sent)*float64(r.size)/secs/(1<<20), float64(r.sent)/secs,
		ms(r.q[0]), ms(r.q[1]), ms(r.q[2]), ms(r.q[3]))
}

func run(ctx context.Context, o options) (result, error) {
	seeds := strings.Split(o.bootstrap, ",")
	acks := kgo.LeaderAck()
	popts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(o.topic),
		kgo.ProducerBatchMaxBytes(16384), kgo.ProducerLinger(5 * time.Millisecond)}
	if o.acks == "all" {
		acks = kgo.AllISRAcks()
	} else {
		popts = append(popts, kgo.DisableIdempotentWrite())
	}
	producer, err := kgo.NewClient(append(popts, kgo.RequiredAcks(acks))...)
	if err != nil {
		return result{}, err
	}
	defer producer.Close()
	consumer, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(o.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return result{}, err
	}
	defer consumer.Close()

	start := time.Now()
	measureFrom := start.Add(o.warmup).UnixNano()
	var sent, failed atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		produce(ctx, producer, o, start, &sent, &failed)
	}()

	lat := &latencies{}
	var received int64
	deadline := start.Add(o.duration + o.drain)
	for {
		select {
		case <-done:
			if received >= sent.Load()-failed.Load() {
				return finish(o, start, sent.Load(), received, failed.Load(), lat), nil
			}
		default:
		}
		if time.Now().After(deadline) {
			break
		}
		pctx, cancel := context.WithDeadline(ctx, deadline)
		fetches := consumer.PollFetches(pctx)
		cancel()
		now := time.Now().UnixNano()
		fetches.EachRecord(func(r *kgo.Record) {
			received++
			scheduled := int64(binary.BigEndian.Uint64(r.Value))
			if scheduled >= measureFrom {
				lat.add(time.Duration(now - scheduled))
			}
		})
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				return result{}, fmt.Errorf("fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
			}
		}
	}
	<-done
	return finish(o, start, sent.Load(), received, failed.Load(), lat),
		fmt.Errorf("drain: received %d of %d records within %v after producing", received, sent.Load(), o.drain)
}

func finish(o options, start time.Time, sent, received, failed int64, lat *latencies) result {
	return result{sent: sent, received: received, errors: failed, elapsed: o.duration, size: o.size,
		q: lat.quantiles(0.5, 0.99, 0.999, 1)}
}

// produce sends records on a fixed schedule: record i is due at
// start + i/rate. Its value carries the due time rather than the time
// Produce was called, so a broker that makes the producer fall behind is
// charged for the wait (no coordinated omission).
func produce(ctx context.Context, cl *kgo.Client, o options, start time.Time, sent, failed *atomic.Int64) {
	interval := time.Second / time.Duration(o.rate)
	total := int64(o.duration.Seconds() * float64(o.rate))
	if interval == 0 {
		interval = 1
	}
	ticker := time.NewTicker(time.Millisecond)
	defer ticker.Stop()
	var i int64
	for i < total {
		<-ticker.C
		due := int64(time.Since(start) / interval)
		for ; i < due && i < total; i++ {
			v := make([]byte, o.size)
			binary.BigEndian.PutUint64(v, uint64(start.Add(time.Duration(i)*interval).UnixNano()))
			sent.Add(1)
			cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
				if err != nil {
					failed.Add(1)
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		slog.Warn("flush", "err", err)
	}
}
