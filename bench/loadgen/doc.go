// Command loadgen is kbroker's fixed-rate end-to-end latency probe for
// `make bench`: one franz-go producer sends records at a steady rate into a
// fresh topic while one franz-go consumer in the same process reads them
// back, and the time from Produce to Poll is recorded per record.
//
// Usage:
//
//	loadgen -bootstrap 127.0.0.1:9092 -topic lat -rate 20000 -size 1024 -duration 15s
//
// It prints one line of key=value pairs (sent, received, errors, mbps, rps,
// p50_ms, p99_ms, p999_ms, max_ms) that bench/run.sh parses.
//
// Invariants: the send time travels in the first 8 bytes of each value, so
// producer and consumer share one clock (this process's monotonic-free wall
// clock in nanoseconds; both ends read it on the same machine). Records sent
// during the warm-up are consumed but not measured. Every wait is bounded by
// the duration plus a fixed drain time.
//
// The producer settings mirror the Java client's defaults that
// kafka-producer-perf-test uses (16 KiB batches, 5 ms linger) so the brokers
// see the same batching from both tools.
//
// No locks: the histogram belongs to the consumer goroutine; counters shared
// with the producer callbacks are atomics.
package main
