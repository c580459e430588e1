package server

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The README's API table is what users read; it must list exactly what
// ApiVersions advertises.
func TestReadmeListsServedAPIs(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (\w+) \| (\d+)-(\d+) \|$`)
	listed := map[int16][2]int16{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		key, _ := strconv.Atoi(m[1])
		lo, _ := strconv.Atoi(m[3])
		hi, _ := strconv.Atoi(m[4])
		listed[int16(key)] = [2]int16{int16(lo), int16(hi)}
	}
	for _, a := range supportedAPIs() {
		got, ok := listed[a.ApiKey]
		if !ok {
			t.Errorf("README does not list API key %d", a.ApiKey)
			continue
		}
		if got != [2]int16{a.MinVersion, a.MaxVersion} {
			t.Errorf("README lists key %d as %d-%d, served %d-%d", a.ApiKey, got[0], got[1], a.MinVersion, a.MaxVersion)
		}
		delete(listed, a.ApiKey)
	}
	for k := range listed {
		t.Errorf("README lists API key %d, which is not served", k)
	}
}
