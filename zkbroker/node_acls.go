package zkbroker

import (
	"context"
	"errors"
	"fmt"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/security/acl"
	"github.com/kbroker/kbroker/zkstore"
)

// ACLs live where Kafka's AclAuthorizer keeps them (ZkAclStore): one
// znode per resource pattern holding all its entries, literal patterns
// under /kafka-acl/<type>/<name>, prefixed ones under
// /kafka-acl-extended/prefixed/<type>/<name>, and a sequential
// notification per change under /kafka-acl-changes (literal) or
// /kafka-acl-extended-changes (prefixed) that every broker watches to
// reload that resource. Writes are conditional on the znode version, so
// two brokers adding ACLs to one resource at once both land.

// ErrACLVersionConflict is a resource's ACLs changed between a read and a
// conditional write; the caller re-reads and retries.
var ErrACLVersionConflict = errors.New("ACLs changed concurrently")

// ResourceACLs reads one resource pattern's entries and znode version;
// a resource without ACLs has none and version -1.
func (n *Node) ResourceACLs(p acl.ResourcePattern) ([]acl.Entry, int32, error) {
	zk, err := n.client()
	if err != nil {
		return nil, 0, err
	}
	return readResourceACLs(zk, p)
}

func readResourceACLs(zk zkstore.Client, p acl.ResourcePattern) ([]acl.Entry, int32, error) {
	path, err := acl.ZnodePath(p)
	if err != nil {
		return nil, 0, err
	}
	data, stat, err := zk.Get(path)
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	entries, err := acl.DecodeEntries(data)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return entries, stat.Version, nil
}

// AllACLs reads every resource's ACLs, as the authorizer does when it
// starts. A resource znode that cannot be read is skipped with a warning
// rather than keeping the broker from starting.
func (n *Node) AllACLs() (map[acl.ResourcePattern][]acl.Entry, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	// The authorizer creates its tree when it starts, as Kafka's
	// KafkaZkClient.createAclPaths does.
	for _, p := range acl.InitPaths() {
		if err := kafkazk.CreateRecursive(zk, p); err != nil {
			return nil, err
		}
	}
	out := map[acl.ResourcePattern][]acl.Entry{}
	for _, root := range []string{acl.LiteralACLRoot, acl.PrefixedACLRoot} {
		types, _, err := zk.Children(root)
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, typ := range types {
			names, _, err := zk.Children(root + "/" + typ)
			if errors.Is(err, zkstore.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				path := root + "/" + typ + "/" + name
				p, err := acl.ParseZnodePath(path)
				if err != nil {
					n.log.Warn("ignoring ACL znode", "path", path, "err", err)
					continue
				}
				entries, _, err := readResourceACLs(zk, p)
				if err != nil {
					n.log.Warn("ignoring unreadable ACLs", "path", path, "err", err)
					continue
				}
				if len(entries) > 0 {
					out[p] = entries
				}
			}
		}
	}
	return out, nil
}

// SetResourceACLs replaces a resource's entries if its znode still has
// version (-1: it must not exist), deleting the znode when entries is
// empty, and announces the change. ErrACLVersionConflict means someone
// else wrote first.
func (n *Node) SetResourceACLs(p acl.ResourcePattern, entries []acl.Entry, version int32) error {
	zk, err := n.client()
	if err != nil {
		return err
	}
	path, err := acl.ZnodePath(p)
	if err != nil {
		return err
	}
	switch {
	case len(entries) == 0 && version < 0:
		return nil
	case len(entries) == 0:
		err = zk.Delete(path, version)
		if errors.Is(err, zkstore.ErrNoNode) {
			err = ErrACLVersionConflict
		}
	case version < 0:
		if err = kafkazk.CreateRecursive(zk, parentPath(path)); err != nil {
			return err
		}
		_, err = zk.Create(path, acl.EncodeEntries(entries), zkstore.ModePersistent)
		if errors.Is(err, zkstore.ErrNodeExists) {
			err = ErrACLVersionConflict
		}
	default:
		_, err = zk.Set(path, acl.EncodeEntries(entries), version)
		if errors.Is(err, zkstore.ErrNoNode) {
			err = ErrACLVersionConflict
		}
	}
	if errors.Is(err, zkstore.ErrBadVersion) {
		err = ErrACLVersionConflict
	}
	if err != nil {
		return err
	}
	dir, prefix, data := acl.ChangeNotification(p)
	if err := kafkazk.CreateRecursive(zk, dir); err != nil {
		return err
	}
	_, err = zk.Create(dir+"/"+prefix, data, zkstore.ModePersistentSequential)
	return err
}

// WatchACLChanges calls fn with each resource pattern a change
// notification names (the ones present at start included), so that the
// broker reloads that resource's ACLs. It blocks until ctx ends.
func (n *Node) WatchACLChanges(ctx context.Context, fn func(acl.ResourcePattern)) {
	done := make(chan struct{})
	dirs := []string{acl.LiteralChangesPath, acl.ExtendedChangesPath}
	for _, dir := range dirs {
		go func() {
			defer func() { done <- struct{}{} }()
			n.watchNotifications(ctx, dir, acl.ChangeSequencePrefix, func(name string, data []byte) {
				p, err := acl.ParseChangeNotification(dir, data)
				if err != nil {
					n.log.Warn("ignoring unreadable ACL change notification", "node", dir+"/"+name, "err", err)
					return
				}
				fn(p)
			})
		}()
	}
	for range dirs {
		<-done
	}
}

func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
