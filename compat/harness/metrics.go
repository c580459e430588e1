package harness

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ScrapeMetric sums the samples of the series name whose label set
// contains every one of labels (e.g. `listener="PLAINTEXT"`). found is
// false when no sample matched.
func ScrapeMetric(addr, name string, labels ...string) (value float64, found bool, err error) {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, lbl, _ := strings.Cut(series, "{")
		if n != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(lbl, l) {
				match = false
			}
		}
		if !match {
			continue
		}
		// A timestamp may follow the value.
		val, _, _ = strings.Cut(val, " ")
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %v", line, err)
		}
		value += v
		found = true
	}
	return value, found, sc.Err()
}
