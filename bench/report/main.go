package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	run := flag.String("run", "", "run directory written by bench/run.sh")
	out := flag.String("out", "", "Markdown file to write")
	flag.Parse()
	if *run == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: report -run DIR -out FILE")
		os.Exit(2)
	}
	if err := write(*run, *out); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func write(run, out string) error {
	rows, err := readRows(filepath.Join(run, "raw.tsv"))
	if err != nil {
		return err
	}
	meta, err := readMeta(filepath.Join(run, "meta.txt"))
	if err != nil {
		return err
	}
	commands, err := os.ReadFile(filepath.Join(run, "commands.txt"))
	if err != nil {
		return err
	}
	profiles, err := filepath.Glob(filepath.Join(run, "profile-*.top"))
	if err != nil {
		return err
	}
	var b strings.Builder
	render(&b, summarize(rows), rows, meta, string(commands))
	for _, p := range profiles {
		top, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "profile-"), ".top")
		fmt.Fprintf(&b, "\n### kbroker CPU profile: %s (first repetition)\n\nFlat, then cumulative over kbroker's frames; "+
			"raw profile in `%s-profiles/profile-%s.pprof`.\n\n```\n%s```\n",
			name, strings.TrimSuffix(filepath.Base(out), ".md"), name, trimProfile(string(top)))
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// trimProfile drops pprof's header lines that name the binary's path on the
// machine that ran the benchmark.
func trimProfile(top string) string {
	var keep []string
	for _, line := range strings.Split(top, "\n") {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}
