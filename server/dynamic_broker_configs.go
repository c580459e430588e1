package server

import (
	"context"
	"strconv"

	"github.com/kbroker/kbroker/config"
	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkbroker"
)

// Dynamic broker configs (KIP-226), as ZooKeeper-mode Kafka keeps them:
// AlterConfigs and IncrementalAlterConfigs on a BROKER resource, served by
// any broker, write /config/brokers/<id> or /config/brokers/<default> and
// a /config/changes notification; every broker re-reads both znodes when
// a notification names its id or the default, and puts the result into
// force (DynamicBrokerConfig.updateBrokerConfig / updateDefaultConfig).
// b.cfg stays the static configuration; b.current() is the one in force,
// which every reader of a dynamic key must use
// (docs/dynamic-broker-configs.md lists what each key changes).

// brokerConfigStore is where dynamic broker configs live: the metadata
// store, through zkbroker.Node.
type brokerConfigStore interface {
	BrokerConfigs(id string) (map[string]string, error)
	SetBrokerConfigs(id string, configs map[string]string) error
}

var _ brokerConfigStore = (*zkbroker.Node)(nil)

// current is the configuration in force: the static one with the
// dynamic layers on top.
func (b *Broker) current() *config.Config {
	if c := b.dynamic.Load(); c != nil {
		return c
	}
	return b.cfg
}

// brokerIDString names this broker's own dynamic config entity.
func (b *Broker) brokerIDString() string { return strconv.Itoa(int(b.cfg.BrokerID)) }

// loadDynamicConfigs reads the dynamic layers before the broker serves,
// as Kafka's DynamicBrokerConfig.initialize does right after connecting
// to ZooKeeper, retrying while the store is unreachable.
func (b *Broker) loadDynamicConfigs(stop context.Context, store brokerConfigStore, nodeFailed <-chan struct{}) {
	b.loadBeforeServing(stop, nodeFailed, "dynamic broker configs", func() error { return b.reloadDynamicConfigs(store) })
}

// runBrokerConfigChanges applies dynamic broker config changes until ctx
// ends.
func (b *Broker) runBrokerConfigChanges(ctx context.Context, node *zkbroker.Node) {
	node.WatchBrokerConfigChanges(ctx, func(entity string) {
		if !kafkazk.IsDefaultBrokerEntity(entity) && entity != b.brokerIDString() {
			return // another broker's own configs
		}
		if err := b.reloadDynamicConfigs(node); err != nil {
			b.logger.Warn("cannot read changed dynamic broker configs; keeping the current ones", "entity", entity, "err", err)
		}
	})
}

// reloadDynamicConfigs reads both dynamic layers and puts them into force.
func (b *Broker) reloadDynamicConfigs(store brokerConfigStore) error {
	def, err := store.BrokerConfigs("")
	if err != nil {
		return err
	}
	own, err := store.BrokerConfigs(b.brokerIDString())
	if err != nil {
		return err
	}
	b.applyDynamicConfigs(def, own)
	return nil
}

// applyDynamicConfigs builds the configuration in force from the two
// layers and reconfigures what depends on the keys that changed. Entries
// Kafka would ignore (DynamicBrokerConfig.fromPersistentProps: configs
// that cannot change dynamically, security configs without a listener
// prefix, per-broker configs among the defaults, bad values) are dropped
// with an error log, so that one bad entry written by another tool cannot
// keep the rest from applying.
func (b *Broker) applyDynamicConfigs(def, own map[string]string) {
	b.dynamicMu.Lock()
	defer b.dynamicMu.Unlock()
	def = b.usableDynamicConfigs(def, false)
	own = b.usableDynamicConfigs(own, true)
	old := b.current()
	next, err := b.cfg.Reconfigured(def, own)
	if err != nil {
		b.logger.Error("dynamic broker configs could not be applied; keeping the current ones", "err", err)
		return
	}
	b.dynamic.Store(next)
	b.applyReplicationRates(own, def)
	changed := changedKeys(old, next)
	if len(changed) == 0 {
		return
	}
	b.logger.Info("dynamic broker configs in force", "changed", changed)
	b.reconfigure(old, next, changed)
}

// usableDynamicConfigs keeps the entries of one layer that can apply.
func (b *Broker) usableDynamicConfigs(props map[string]string, perBroker bool) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		if config.IsPasswordConfig(k) {
			// Kafka stores these encrypted with password.encoder.secret,
			// which kbroker does not implement (GAPS.md).
			b.logger.Error("dynamic password config cannot be decoded, ignoring it", "config", k)
			continue
		}
		one := map[string]string{k: v}
		if err := config.CheckDynamicBrokerConfigs(one, perBroker); err != nil {
			b.logger.Error("dynamic broker config ignored", "config", k, "per_broker", perBroker, "err", err)
			continue
		}
		out[k] = v
	}
	return out
}

// changedKeys lists the keys whose value in force differs.
func changedKeys(old, next *config.Config) []string {
	var out []string
	oldE := map[string]string{}
	for _, e := range old.BrokerConfigEntries() {
		oldE[e.Name] = e.Value
	}
	seen := map[string]bool{}
	for _, e := range next.BrokerConfigEntries() {
		seen[e.Name] = true
		if v, ok := oldE[e.Name]; !ok || v != e.Value {
			out = append(out, e.Name)
		}
	}
	for k := range oldE {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// reconfigure is Kafka's BrokerReconfigurables for the keys that changed:
// the log defaults of every hosted log, the connection limits, the
// replica fetcher count and the listeners' TLS stores.
func (b *Broker) reconfigure(old, next *config.Config, changed []string) {
	logs, conns := false, false
	for _, k := range changed {
		if k == "num.replica.fetchers" && b.fetchers != nil {
			// DynamicThreadPool: the fetchers are reassigned by the new count.
			b.fetchers.Resize(int(next.NumReplicaFetchers))
		}
		if config.IsDynamicLogConfig(k) {
			logs = true
		}
		if config.IsConnectionLimitConfig(k) {
			conns = true
		}
	}
	if logs {
		// DynamicLogConfig.updateLogsConfig: every log takes the new
		// broker defaults under its own overrides.
		// The overrides did not change, so the topic table stays as it is.
		b.cluster.mu.Lock()
		for _, t := range b.topicsSnap.Load().byName {
			b.applyTopicLogConfigs(t, t.Configs)
		}
		b.cluster.mu.Unlock()
	}
	if conns && b.srv != nil {
		b.srv.SetConnectionLimits(serverConfig(next, nil))
	}
	// Listener ssl.* changes (SslFactory.reconfigure): a keystore that
	// does not load, or names another broker, keeps the old one in force.
	if builds, err := b.buildListenerTLS(next, nil); err != nil {
		b.logger.Error("listener TLS configs could not be applied; keeping the current ones", "err", err)
	} else {
		b.applyListenerTLS(builds)
	}
}
