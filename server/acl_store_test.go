package server

import (
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/security/acl"
)

// slowACLStore is a metadata store whose first read of a resource's ACLs
// returns what the store held when the read began, only once release is
// closed: a change notification's reload overtaken by a write.
type slowACLStore struct {
	securityStore

	mu       sync.Mutex
	entries  []acl.Entry
	version  int32
	reads    int
	started  chan struct{}
	released chan struct{}
}

func (s *slowACLStore) AllACLs() (map[acl.ResourcePattern][]acl.Entry, error) { return nil, nil }

func (s *slowACLStore) ResourceACLs(acl.ResourcePattern) ([]acl.Entry, int32, error) {
	s.mu.Lock()
	entries, version := slices.Clone(s.entries), s.version
	s.reads++
	first := s.reads == 1
	s.mu.Unlock()
	if first {
		close(s.started)
		<-s.released
	}
	return entries, version, nil
}

func (s *slowACLStore) SetResourceACLs(_ acl.ResourcePattern, entries []acl.Entry, version int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries, s.version = slices.Clone(entries), version+1
	return nil
}

// TestACLReloadDoesNotUndoAWrite: a reload whose read began before a
// CreateAcls wrote must not leave the cache with the older entries.
func TestACLReloadDoesNotUndoAWrite(t *testing.T) {
	store := &slowACLStore{started: make(chan struct{}), released: make(chan struct{})}
	b := &Broker{
		logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		authorizer: acl.New(acl.Config{}),
		security:   store,
	}
	p := acl.ResourcePattern{Type: kmsg.ACLResourceTypeTopic, Name: "orders", PatternType: kmsg.ACLResourcePatternTypeLiteral}
	alice := acl.Entry{Principal: "User:alice", Host: "*", Operation: kmsg.ACLOperationRead, Permission: kmsg.ACLPermissionTypeAllow}

	reloaded := make(chan struct{})
	go func() {
		defer close(reloaded)
		b.reloadACLs(p)
	}()
	<-store.started
	written := make(chan error, 1)
	go func() {
		written <- b.updateResourceACLs(p, func(current []acl.Entry) ([]acl.Entry, bool) {
			return append(slices.Clone(current), alice), true
		})
	}()
	// Give the write every chance to finish before the reload's read
	// returns: without the lock it does, and the reload then puts the
	// empty read into the cache.
	select {
	case err := <-written:
		written <- err
	case <-time.After(100 * time.Millisecond):
	}
	close(store.released)
	<-reloaded
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not finish within 10s")
	}
	if !b.authorizer.Authorize("User:alice", "127.0.0.1", kmsg.ACLOperationRead, acl.Resource{Type: kmsg.ACLResourceTypeTopic, Name: "orders"}) {
		t.Fatal("the cache lost the written ACL to a reload that read before the write")
	}
}
