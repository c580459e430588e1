package logstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CheckpointEntry is one line of an offset checkpoint file
// (replication-offset-checkpoint, recovery-point-offset-checkpoint,
// log-start-offset-checkpoint): `<topic> <partition> <offset>`.
type CheckpointEntry struct {
	Topic     string
	Partition int32
	Offset    int64
}

// ReadCheckpoint reads an offset checkpoint file (CheckpointFile.java). A
// missing file reads as no entries; an unknown version, a malformed line or a
// wrong entry count is an error, as in Kafka.
func ReadCheckpoint(path string) ([]CheckpointEntry, error) {
	lines, err := readCheckpointLines(path, 3)
	if err != nil {
		return nil, err
	}
	out := make([]CheckpointEntry, 0, len(lines))
	for _, f := range lines {
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("checkpoint %s: malformed line %q", path, strings.Join(f, " "))
		}
		out = append(out, CheckpointEntry{Topic: f[0], Partition: int32(p), Offset: o})
	}
	return out, nil
}

// WriteCheckpoint writes entries to path via path.tmp, fsync and rename, so
// a crash leaves either the old or the new file.
func WriteCheckpoint(path string, entries []CheckpointEntry) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %d %d\n", e.Topic, e.Partition, e.Offset)
	}
	return WriteFileAtomic(path, b.Bytes())
}

// readCheckpointLines parses the version-0 framing and returns each entry's
// whitespace-separated fields, every entry having exactly nfields.
func readCheckpointLines(path string, nfields int) ([][]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	v, ok := next()
	if !ok || strings.TrimSpace(v) != "0" {
		return nil, fmt.Errorf("checkpoint %s: unknown version %q", path, v)
	}
	c, ok := next()
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if !ok || err != nil || n < 0 {
		return nil, fmt.Errorf("checkpoint %s: malformed entry count %q", path, c)
	}
	out := make([][]string, 0, min(n, 1<<16))
	for {
		line, ok := next()
		if !ok {
			break
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != nfields {
			return nil, fmt.Errorf("checkpoint %s: malformed line %q", path, line)
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("checkpoint %s: %d entries, header says %d", path, len(out), n)
	}
	return out, nil
}

// WriteFileAtomic writes data to path.tmp, fsyncs it, renames it over path
// and fsyncs the directory so the rename itself survives a crash. Every
// small state file of the broker (checkpoints, meta.properties, the
// standalone topic table, producer-id blocks) is written this way.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
