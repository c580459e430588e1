// Command report turns one `make bench` run directory into the Markdown
// results file: medians over the repetitions, the kbroker/Kafka ratio per
// figure, the issue 5 targets met or missed, the exact commands, versions,
// machine load, kbroker CPU profiles and every raw row.
//
// Usage: report -run DIR -out bench/results/<date>.md
//
// DIR holds raw.tsv (one row per measured run, written by
// bench/workloads.sh), meta.txt (key=value lines), commands.txt and
// profile-*.top (`go tool pprof -top` output). A workload where every
// repetition failed shows "fail" rather than a number; one with no row at
// all (skipped, like the cluster with CLUSTER_RECORDS=0) is left out of the
// headline and targets tables. Medians use only the repetitions that
// succeeded, and the count is shown.
package main
