package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/config"
)

// alterBrokerConfigs is ZkAdminManager.alterBrokerConfigs: props become
// the whole dynamic config set of this broker (name is its id) or of the
// cluster defaults (name ""), validated as DynamicBrokerConfig.validate
// does, then stored for every broker to apply.
func (b *Broker) alterBrokerConfigs(name string, props map[string]string, validateOnly bool) error {
	perBroker := name != ""
	if err := b.current().ValidateDynamicBrokerConfigs(props, perBroker); err != nil {
		return brokerConfigRefused(err)
	}
	for k := range props {
		if !config.IsPasswordConfig(k) {
			continue
		}
		// DynamicBrokerConfig.toPersistentProps: passwords are stored
		// encrypted with password.encoder.secret, which kbroker does not
		// implement (GAPS.md); Kafka without the secret answers this.
		if !perBroker {
			return brokerConfigNotStored(name, "Password config can be defined only at broker level")
		}
		return brokerConfigNotStored(name, "Password encoder secret not configured")
	}
	// A listener keystore or truststore must load, and name the same
	// broker, before the change is stored (SslFactory.validateReconfiguration).
	reload := tlsReloadListeners(props)
	if perBroker && len(reload) > 0 {
		next, err := b.current().Reconfigured(b.current().DynamicDefaultConfigs(), props)
		if err != nil {
			return brokerConfigRefused(err)
		}
		if _, err := b.buildListenerTLS(next, reload); err != nil {
			return brokerConfigRefused(err)
		}
	}
	if validateOnly {
		return nil
	}
	if b.brokerConfigs == nil {
		return newTopicError(kerr.UnknownServerError, "the metadata store is not connected yet")
	}
	id := ""
	if perBroker {
		id = b.brokerIDString()
	}
	if err := b.brokerConfigs.SetBrokerConfigs(id, props); err != nil {
		return err
	}
	// Every broker applies the change from the notification; this one
	// applies it at once too, so that a describe right after the alter
	// already shows it.
	if err := b.reloadDynamicConfigs(b.brokerConfigs); err != nil {
		b.logger.Warn("cannot re-read dynamic broker configs after writing them", "err", err)
	}
	if perBroker && len(reload) > 0 {
		// The same location set again: the file may have changed in
		// place (reloadUpdatedFilesWithoutConfigChange).
		builds, err := b.buildListenerTLS(b.current(), reload)
		if err != nil {
			return brokerConfigRefused(err)
		}
		b.applyListenerTLS(builds)
	}
	return nil
}

// storedBrokerConfigs reads the dynamic configs of the entity a BROKER
// resource names, without the entries that cannot apply
// (DynamicBrokerConfig.fromPersistentProps).
func (b *Broker) storedBrokerConfigs(name string) (map[string]string, error) {
	if b.brokerConfigs == nil {
		return nil, newTopicError(kerr.UnknownServerError, "the metadata store is not connected yet")
	}
	id := ""
	if name != "" {
		id = b.brokerIDString()
	}
	stored, err := b.brokerConfigs.BrokerConfigs(id)
	if err != nil {
		return nil, err
	}
	return b.usableDynamicConfigs(stored, name != ""), nil
}

// applyBrokerConfigOps applies IncrementalAlterConfigs ops to a broker
// entity's stored configs; a LIST config without a stored value starts
// from Kafka's default.
func applyBrokerConfigOps(current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error) {
	return applyIncrementalOps(current, ops, func(name string) (bool, string, error) {
		typ, def, ok := config.BrokerConfigType(name)
		return ok && typ == kmsg.ConfigTypeList, def, nil
	})
}
