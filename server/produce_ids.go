package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/kbroker/kbroker/logstore"
)

// producerIDBlockSize is the size of the blocks producer ids are handed
// out in, as with Kafka's /latest_producer_id_block.
const producerIDBlockSize = 1000

// producerIDBlockFile, in the first log dir, holds the first id of the next
// unallocated block. It is written (and synced) before any id of a new
// block is handed out, so an id is never given twice, across restarts too;
// a crash only wastes the rest of the current block.
const producerIDBlockFile = "producer-id-block"

// producerIDManager allocates producer ids for InitProducerId.
type producerIDManager struct {
	path string
	// cluster, when set, claims blocks cluster-wide instead (ZooKeeper's
	// /latest_producer_id_block in cluster mode): ids must be unique across
	// brokers, not only across this broker's restarts.
	cluster func() (start, end int64, err error)

	mu        sync.Mutex
	next, end int64 // current block: [next, end)
}

func newProducerIDManager(dir string) *producerIDManager {
	return &producerIDManager{path: filepath.Join(dir, producerIDBlockFile)}
}

// generate returns a producer id that was never returned before.
func (m *producerIDManager) generate() (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next == m.end {
		if err := m.claimBlock(); err != nil {
			return -1, err
		}
	}
	id := m.next
	m.next++
	return id, nil
}

// claimBlock reserves the next block, cluster-wide or on disk. The caller
// holds mu.
func (m *producerIDManager) claimBlock() error {
	if m.cluster != nil {
		start, end, err := m.cluster()
		if err != nil {
			return err
		}
		m.next, m.end = start, end
		return nil
	}
	start := int64(0)
	data, err := os.ReadFile(m.path)
	switch {
	case err == nil:
		start, err = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || start < 0 {
			return fmt.Errorf("%s: corrupt producer id block %q", m.path, data)
		}
	case !os.IsNotExist(err):
		return err
	}
	end := start + producerIDBlockSize
	if err := logstore.WriteFileAtomic(m.path, []byte(strconv.FormatInt(end, 10)+"\n")); err != nil {
		return err
	}
	m.next, m.end = start, end
	return nil
}
