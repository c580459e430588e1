package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// row is one measured run, in the column order bench/workloads.sh writes.
type row struct {
	broker, workload string
	rep              int
	ok               bool
	mbps, rps        float64
	p50, p99, p999   float64 // milliseconds
	cpuSeconds       float64
	bytes            float64
	rssKB            float64
	load1            float64
	// clientCPUSeconds is the perf tool's or loadgen's CPU (with its
	// children); rows written before workloads.sh recorded it have none.
	clientCPUSeconds float64
	hasClientCPU     bool
}

// cpuPerGB is broker CPU seconds per 10^9 payload bytes moved.
func (r row) cpuPerGB() float64 {
	if r.bytes == 0 {
		return 0
	}
	return r.cpuSeconds / (r.bytes / 1e9)
}

// clientCPUPerGB is the client's CPU seconds per 10^9 payload bytes; NaN
// when the row has no client CPU, so that summarize leaves it out.
func (r row) clientCPUPerGB() float64 {
	if !r.hasClientCPU {
		return math.NaN()
	}
	if r.bytes == 0 {
		return 0
	}
	return r.clientCPUSeconds / (r.bytes / 1e9)
}

// totalCPUPerGB is broker and client CPU together per 10^9 payload bytes:
// what the run cost the machine.
func (r row) totalCPUPerGB() float64 {
	return r.cpuPerGB() + r.clientCPUPerGB()
}

// clientShare is the client's fraction of the run's broker+client CPU.
func (r row) clientShare() float64 {
	total := r.cpuSeconds + r.clientCPUSeconds
	if !r.hasClientCPU || total == 0 {
		return math.NaN()
	}
	return r.clientCPUSeconds / total
}

// busyCores is the run's broker and client CPU seconds per second of the
// run, the second taken as payload bytes over the tool's own MB/s, which
// kafka-producer-perf-test, kafka-consumer-perf-test and bench/loadgen all
// count in 2^20 bytes. NaN without client CPU or a rate.
func (r row) busyCores() float64 {
	if !r.hasClientCPU || r.mbps <= 0 || r.bytes <= 0 {
		return math.NaN()
	}
	wall := r.bytes / (r.mbps * (1 << 20))
	return (r.cpuSeconds + r.clientCPUSeconds) / wall
}

func readRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		c := strings.Split(sc.Text(), "\t")
		// 13 columns: a raw file from before client_cpu_s was recorded.
		if len(c) != 13 && len(c) != 14 {
			return nil, fmt.Errorf("%s:%d: %d columns, want 13 or 14", path, line, len(c))
		}
		var nums [10]float64
		for i, s := range c[4:] {
			if nums[i], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: column %d: %w", path, line, i+5, err)
			}
		}
		rep, err := strconv.Atoi(c[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: rep: %w", path, line, err)
		}
		rows = append(rows, row{broker: c[0], workload: c[1], rep: rep, ok: c[3] == "ok",
			mbps: nums[0], rps: nums[1], p50: nums[2], p99: nums[3], p999: nums[4],
			cpuSeconds: nums[5], bytes: nums[6], rssKB: nums[7], load1: nums[8],
			clientCPUSeconds: nums[9], hasClientCPU: len(c) == 14})
	}
	return rows, sc.Err()
}

// median of the values; the lower middle one for an even count keeps the
// figure one that was actually measured. ok is false with no values.
func median(vs []float64) (float64, bool) {
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[(len(s)-1)/2], true
}

func readMeta(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		// A line may hold several space-separated key=value pairs only when
		// its first value has no spaces; keep it whole under its first key.
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m, nil
}
