package zkbroker

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// configWatchBackoff spaces retries while ZooKeeper is unreachable or the
// node is not connected yet.
const configWatchBackoff = time.Second

// WatchTopicConfigChanges is the broker side of Kafka's config change
// notifications (ZkNodeChangeNotificationListener with
// TopicConfigHandler): every broker watches /config/changes and, for each
// notification with a sequence number above the last one it handled, calls
// fn with the topic the notification names, so that the broker re-reads
// /config/topics/<t> (TopicConfigs). Notifications for other entity types
// are skipped. Like Kafka's listener it handles the notifications already
// present when it starts, once each. It blocks until ctx ends, surviving
// session expiries (the watch is re-armed on the new session), and calls
// fn on its own goroutine, one call at a time.
//
// Unlike Kafka, it does not delete notifications older than 15 minutes.
func (n *Node) WatchTopicConfigChanges(ctx context.Context, fn func(topic string)) {
	n.watchNotifications(ctx, kafkazk.ConfigChangesPath, kafkazk.ConfigChangePrefix, func(name string, data []byte) {
		entity, err := kafkazk.DecodeConfigChange(data)
		if err != nil {
			n.log.Warn("ignoring unreadable config change", "node", name, "err", err)
			return
		}
		if topic, ok := strings.CutPrefix(entity, kafkazk.ConfigTypeTopic+"/"); ok && topic != "" {
			fn(topic)
		}
	})
}

// watchNotifications calls fn, in sequence order and once each, with
// every sequential znode dir/<prefix><seq> that exists when it starts or
// appears later, until ctx ends.
func (n *Node) watchNotifications(ctx context.Context, dir, prefix string, fn func(name string, data []byte)) {
	last := int64(-1)
	for ctx.Err() == nil {
		ch, err := n.handleNotifications(dir, prefix, &last, fn)
		if err != nil {
			if !errors.Is(err, ErrNotConnected) {
				n.log.Debug("change notifications", "path", dir, "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(configWatchBackoff):
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-ch:
		}
	}
}

// handleNotifications lists dir (arming the child watch), hands the new
// notifications to fn in sequence order and advances *last past them. A
// notification that cannot be read for a reason other than its deletion
// stops the pass there, to be retried.
func (n *Node) handleNotifications(dir, prefix string, last *int64, fn func(name string, data []byte)) (<-chan zkstore.Event, error) {
	zk, err := n.client()
	if err != nil {
		return nil, err
	}
	if err := kafkazk.CreateRecursive(zk, dir); err != nil {
		return nil, err
	}
	names, _, ch, err := zk.ChildrenW(dir)
	if err != nil {
		return nil, err
	}
	type notification struct {
		seq  int64
		name string
	}
	var fresh []notification
	for _, name := range names {
		if seq, err := kafkazk.SequenceNumber(name, prefix); err == nil && seq > *last {
			fresh = append(fresh, notification{seq, name})
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].seq < fresh[j].seq })
	for _, nt := range fresh {
		data, _, err := zk.Get(dir + "/" + nt.name)
		switch {
		case errors.Is(err, zkstore.ErrNoNode):
			*last = nt.seq
			continue
		case err != nil:
			return nil, err
		}
		*last = nt.seq
		fn(nt.name, data)
	}
	return ch, nil
}

// WatchQuotaConfigChanges is the broker side of Kafka's ClientIdConfigHandler,
// UserConfigHandler and IpConfigHandler: it calls fn with the root type
// ("clients", "users" or "ips") and the sanitized name ("<c>", "<u>",
// "<u>/clients/<c>", "<ip>", <default> for a default) of each quota entity
// a config change notification names, so that the broker re-reads that
// entity's znode. Other entity types are skipped. Like
// WatchTopicConfigChanges it starts with the notifications already present
// and blocks until ctx ends.
func (n *Node) WatchQuotaConfigChanges(ctx context.Context, fn func(root, name string)) {
	n.watchNotifications(ctx, kafkazk.ConfigChangesPath, kafkazk.ConfigChangePrefix, func(name string, data []byte) {
		entity, err := kafkazk.DecodeConfigChange(data)
		if err != nil {
			return // WatchTopicConfigChanges logs it
		}
		if root, name, ok := kafkazk.QuotaEntityOf(entity); ok {
			fn(root, name)
		}
	})
}
