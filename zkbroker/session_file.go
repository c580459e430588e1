package zkbroker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kbroker/kbroker/zkstore"
)

// SessionFileName is the file in a log dir holding the broker's current
// ZooKeeper session credentials. Kafka has no such file; a Kafka broker on
// the same log dir ignores it (it only loads directories).
const SessionFileName = "zookeeper-session"

// A broker killed without closing its ZooKeeper session leaves its
// registration, /brokers/ids/<id>, alive until the server expires the
// session: zookeeper.session.timeout.ms later. Kafka exits at start-up
// meanwhile (NodeExistsException), and its controller keeps the dead
// broker's partitions leaderless. With the session's credentials kept
// beside the log, the next start closes that session itself, so the
// registration and any /controller it held go at once: the controller
// sees the broker bounce (a new broker epoch) instead of a long absence.

// sessionFile reads and writes the credentials file. Writes are
// write-then-rename, so a crash leaves the old file or the new one.
type sessionFile struct{ path string }

func (f sessionFile) save(c zkstore.SessionCredentials) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# kbroker: the ZooKeeper session of the last run, closed at the next start\n")
	fmt.Fprintf(&b, "version=0\nsession.id=%d\nsession.password=%s\n", c.ID, base64.StdEncoding.EncodeToString(c.Password))
	tmp := f.path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, f.path)
}

// load returns ok=false when there is no file.
func (f sessionFile) load() (zkstore.SessionCredentials, bool, error) {
	data, err := os.ReadFile(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return zkstore.SessionCredentials{}, false, nil
	}
	if err != nil {
		return zkstore.SessionCredentials{}, false, err
	}
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return zkstore.SessionCredentials{}, false, fmt.Errorf("%s: malformed line %q", f.path, line)
		}
		props[k] = v
	}
	if props["version"] != "0" {
		return zkstore.SessionCredentials{}, false, fmt.Errorf("%s: unknown version %q", f.path, props["version"])
	}
	id, err := strconv.ParseInt(props["session.id"], 10, 64)
	if err != nil {
		return zkstore.SessionCredentials{}, false, fmt.Errorf("%s: session.id: %w", f.path, err)
	}
	pw, err := base64.StdEncoding.DecodeString(props["session.password"])
	if err != nil {
		return zkstore.SessionCredentials{}, false, fmt.Errorf("%s: session.password: %w", f.path, err)
	}
	return zkstore.SessionCredentials{ID: id, Password: pw}, true, nil
}

func (f sessionFile) remove() error {
	err := os.Remove(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// closePreviousSession closes the session a previous run of this broker
// left open, if the file names one the ensemble still knows. Failing to
// is not fatal: registration then waits for the session to expire.
func closePreviousSession(ctx context.Context, f sessionFile, connect string, timeout time.Duration, log *slog.Logger) {
	cred, ok, err := f.load()
	if err != nil {
		log.Warn("cannot read the previous ZooKeeper session; a registration it left waits for expiry", "file", f.path, "err", err)
		return
	}
	if !ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	closed, err := zkstore.CloseSession(cctx, connect, cred, timeout)
	switch {
	case err != nil:
		log.Warn("cannot close the previous ZooKeeper session; a registration it left waits for expiry",
			"session", fmt.Sprintf("0x%x", cred.ID), "err", err)
	case closed:
		log.Info("closed the ZooKeeper session a previous run left open, with its registration",
			"session", fmt.Sprintf("0x%x", cred.ID))
	default:
		log.Info("the previous run's ZooKeeper session has already ended", "session", fmt.Sprintf("0x%x", cred.ID))
	}
}

// sessionFileIn names the credentials file of a log dir.
func sessionFileIn(logDir string) sessionFile {
	return sessionFile{path: filepath.Join(logDir, SessionFileName)}
}

// LoadSessionFile reads the credentials of the session a broker with this
// first log dir holds (or last held); ok=false when there is no file. Tests
// use it to end one broker's session from outside, as an expiry would.
func LoadSessionFile(logDir string) (cred zkstore.SessionCredentials, ok bool, err error) {
	return sessionFileIn(logDir).load()
}
