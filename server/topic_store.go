package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/kbroker/kbroker/logstore"
)

// TopicStore persists the topic table. Standalone brokers keep it in a file
// in the first log dir; cluster mode keeps it in ZooKeeper
// (/brokers/topics, /config/topics).
type TopicStore interface {
	Load() ([]TopicRecord, error)
	Save(TopicRecord) error
	Delete(name string) error
}

// TopicRecord is the persisted form of a topic.
type TopicRecord struct {
	Name       string            `json:"name"`
	ID         [16]byte          `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

func topicRecordOf(t *Topic, partitions int32) TopicRecord {
	return TopicRecord{Name: t.Name, ID: t.ID, Partitions: partitions, Configs: t.Configs}
}

// fileTopicStore keeps every topic in one JSON file, rewritten atomically
// (tmp + fsync + rename) on each change. Topic changes are rare, so a whole
// rewrite is simpler than a journal.
type fileTopicStore struct {
	path string

	mu     sync.Mutex
	topics map[string]TopicRecord
}

const topicStoreFile = "kbroker-topics.json"

func newFileTopicStore(dir string) *fileTopicStore {
	return &fileTopicStore{path: filepath.Join(dir, topicStoreFile), topics: map[string]TopicRecord{}}
}

func (s *fileTopicStore) Load() ([]TopicRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []TopicRecord
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	for _, r := range recs {
		s.topics[r.Name] = r
	}
	return recs, nil
}

func (s *fileTopicStore) Save(r TopicRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.topics[r.Name]
	s.topics[r.Name] = r
	if err := s.writeLocked(); err != nil {
		if had {
			s.topics[r.Name] = old
		} else {
			delete(s.topics, r.Name)
		}
		return err
	}
	return nil
}

func (s *fileTopicStore) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.topics, name)
	return s.writeLocked()
}

func (s *fileTopicStore) writeLocked() error {
	recs := make([]TopicRecord, 0, len(s.topics))
	for _, r := range s.topics {
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return logstore.WriteFileAtomic(s.path, data)
}
