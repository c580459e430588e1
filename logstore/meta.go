package logstore

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	metaPropertiesFile     = "meta.properties"
	cleanShutdownFile      = ".kafka_cleanshutdown"
	lockFile               = ".lock"
	recoveryCheckpointFile = "recovery-point-offset-checkpoint"
	logStartCheckpointFile = "log-start-offset-checkpoint"
	partitionMetadataFile  = "partition.metadata"
)

// MetaProperties is a log dir's meta.properties in the ZooKeeper-mode
// version 0 form (MetaProperties.java).
type MetaProperties struct {
	BrokerID  int32
	ClusterID string
}

// readMetaProperties parses a Java properties file; ok is false when the
// file does not exist.
func readMetaProperties(path string) (MetaProperties, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return MetaProperties{}, false, nil
	}
	if err != nil {
		return MetaProperties{}, false, err
	}
	props := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			k, v, _ = strings.Cut(line, ":")
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if v := props["version"]; v != "0" && v != "1" {
		return MetaProperties{}, false, fmt.Errorf("%s: unsupported version %q", path, v)
	}
	idText := props["broker.id"]
	if idText == "" {
		idText = props["node.id"]
	}
	id, err := strconv.ParseInt(idText, 10, 32)
	if err != nil {
		return MetaProperties{}, false, fmt.Errorf("%s: bad broker.id %q", path, idText)
	}
	return MetaProperties{BrokerID: int32(id), ClusterID: props["cluster.id"]}, true, nil
}

// writeMetaProperties writes what Java's Properties.store writes with an
// empty comment: "#", a "#<date>" line, then the keys.
func writeMetaProperties(path string, m MetaProperties, now time.Time) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "#\n#%s\nversion=0\nbroker.id=%d\ncluster.id=%s\n",
		now.Format("Mon Jan 02 15:04:05 MST 2006"), m.BrokerID, m.ClusterID)
	return WriteFileAtomic(path, b.Bytes())
}

// NewUUID returns a random Kafka Uuid (version 4 bits as Java's
// randomUUID sets them).
func NewUUID() [16]byte {
	var u [16]byte
	for {
		if _, err := rand.Read(u[:]); err != nil {
			panic(err)
		}
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		// Kafka never hands out the all-zero or reserved ids, nor ones
		// whose text starts with '-' (Uuid.randomUuid).
		if s := UUIDString(u); s[0] != '-' {
			return u
		}
	}
}

// UUIDString is Kafka's Uuid.toString: URL-safe base64 without padding.
func UUIDString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUUID is the inverse of UUIDString.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("invalid uuid %q", s)
	}
	copy(u[:], b)
	return u, nil
}

// writePartitionMetadata writes partition.metadata
// (PartitionMetadataFile.java).
func writePartitionMetadata(dir string, topicID [16]byte) error {
	// Byte for byte what Kafka writes: no newline after the id.
	data := fmt.Sprintf("version: 0\ntopic_id: %s", UUIDString(topicID))
	return WriteFileAtomic(filepath.Join(dir, partitionMetadataFile), []byte(data))
}

// readPartitionMetadata returns the topic id; ok is false when the file is
// missing.
func readPartitionMetadata(dir string) (id [16]byte, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, partitionMetadataFile))
	if errors.Is(err, fs.ErrNotExist) {
		return id, false, nil
	}
	if err != nil {
		return id, false, err
	}
	var version, topic string
	for _, line := range strings.Split(string(data), "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		switch strings.TrimSpace(k) {
		case "version":
			version = strings.TrimSpace(v)
		case "topic_id":
			topic = strings.TrimSpace(v)
		}
	}
	if version != "0" {
		return id, false, fmt.Errorf("%s: unsupported version %q", partitionMetadataFile, version)
	}
	id, err = ParseUUID(topic)
	return id, err == nil, err
}
