package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kbroker/kbroker/security/acl"
	"github.com/kbroker/kbroker/zkbroker"
)

// aclStore is the metadata store's side of the authorizer (zkbroker.Node).
type aclStore interface {
	AllACLs() (map[acl.ResourcePattern][]acl.Entry, error)
	ResourceACLs(p acl.ResourcePattern) ([]acl.Entry, int32, error)
	SetResourceACLs(p acl.ResourcePattern, entries []acl.Entry, version int32) error
}

var _ aclStore = (*zkbroker.Node)(nil)

// aclWriteAttempts bounds the re-reads when other brokers keep changing
// the same resource's ACLs.
const aclWriteAttempts = 20

// loadACLs fills the authorizer's cache before the broker serves,
// retrying while the store is not reachable yet.
func (b *Broker) loadACLs(stop context.Context, store aclStore, nodeFailed <-chan struct{}) {
	b.loadBeforeServing(stop, nodeFailed, "ACLs", func() error {
		b.aclMu.Lock()
		defer b.aclMu.Unlock()
		all, err := store.AllACLs()
		if err != nil {
			return err
		}
		for p, entries := range all {
			b.authorizer.SetResourceACLs(p, entries)
		}
		b.logger.Info("ACLs loaded", "resources", len(all))
		return nil
	})
}

// loadBeforeServing runs load until it succeeds, backing off while the
// metadata store is unreachable, or until the broker stops or its node
// fails: what a broker must know before it serves (ACLs, dynamic
// configs, quotas) is read this way.
func (b *Broker) loadBeforeServing(stop context.Context, nodeFailed <-chan struct{}, what string, load func() error) {
	backoff := 50 * time.Millisecond
	for {
		err := load()
		if err == nil {
			return
		}
		if !errors.Is(err, zkbroker.ErrNotConnected) {
			b.logger.Info("waiting for the metadata store to load "+what, "err", err)
		}
		select {
		case <-stop.Done():
			return
		case <-nodeFailed:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// reloadACLs re-reads one resource's ACLs after a change notification.
func (b *Broker) reloadACLs(p acl.ResourcePattern) {
	store, ok := b.security.(aclStore)
	if !ok {
		return
	}
	b.aclMu.Lock()
	defer b.aclMu.Unlock()
	entries, _, err := store.ResourceACLs(p)
	if err != nil {
		b.logger.Warn("cannot reload changed ACLs; keeping the cached ones", "resource", patternString(p), "err", err)
		return
	}
	b.authorizer.SetResourceACLs(p, entries)
}

// updateResourceACLs applies change to a resource's stored entries with a
// conditional write, re-reading on conflicts, and puts the result in the
// local cache at once (the notification reaches the other brokers).
// change returns the new entries and whether anything changed.
func (b *Broker) updateResourceACLs(p acl.ResourcePattern, change func([]acl.Entry) ([]acl.Entry, bool)) error {
	store, ok := b.security.(aclStore)
	if !ok {
		return errors.New("no ACL store")
	}
	b.aclMu.Lock()
	defer b.aclMu.Unlock()
	for attempt := 0; attempt < aclWriteAttempts; attempt++ {
		current, version, err := store.ResourceACLs(p)
		if err != nil {
			return err
		}
		next, changed := change(current)
		if !changed {
			b.authorizer.SetResourceACLs(p, current)
			return nil
		}
		err = store.SetResourceACLs(p, next, version)
		if errors.Is(err, zkbroker.ErrACLVersionConflict) {
			continue
		}
		if err != nil {
			return err
		}
		b.authorizer.SetResourceACLs(p, next)
		return nil
	}
	return errors.New("ACLs of " + patternString(p) + " kept changing concurrently")
}

// patternString names a pattern in logs as Kafka's ResourcePattern does.
func patternString(p acl.ResourcePattern) string {
	return fmt.Sprintf("ResourcePattern(resourceType=%s, name=%s, patternType=%s)", acl.ResourceTypeName(p.Type), p.Name, p.PatternType)
}
