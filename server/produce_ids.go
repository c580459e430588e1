package server

import "sync"

// producerIDManager allocates producer ids for InitProducerId from blocks
// claimed through the metadata store's /latest_producer_id_block, so that
// an id is never given twice — across brokers and across restarts; a crash
// only wastes the rest of the current block.
type producerIDManager struct {
	claim func() (start, end int64, err error)

	mu        sync.Mutex
	next, end int64 // current block: [next, end)
}

// generate returns a producer id that was never returned before.
func (m *producerIDManager) generate() (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next == m.end {
		start, end, err := m.claim()
		if err != nil {
			return -1, err
		}
		m.next, m.end = start, end
	}
	id := m.next
	m.next++
	return id, nil
}
