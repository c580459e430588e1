package metadataversion

// What a version decides (Kafka's MetadataVersion predicates). Only the
// rules kbroker acts on are here; docs/ibp.md lists the other milestones.

// AlterPartition: partition leaders ask the controller for ISR changes
// (AlterPartition, KIP-497) instead of writing the state znode and
// announcing the change under /isr_change_notification.
func (v Version) AlterPartition() bool { return v.AtLeast(v2_7_IV2) }

// AllocateProducerIDs: brokers ask the controller for producer id blocks
// (AllocateProducerIds, KIP-730) instead of writing
// /latest_producer_id_block themselves.
func (v Version) AllocateProducerIDs() bool { return v.AtLeast(v3_0_IV0) }

// FeatureVersioning: brokers register with their supported features
// (registration version 5, KIP-584).
func (v Version) FeatureVersioning() bool { return v.AtLeast(v2_7_IV0) }

// BrokerRegistrationVersion is the version of the /brokers/ids/<id> JSON a
// broker writes: 5 with features from 2.7-IV0, 4 from 0.10.0-IV1.
func (v Version) BrokerRegistrationVersion() int {
	switch {
	case v.FeatureVersioning():
		return 5
	case v.AtLeast(v0_10_0_IV1):
		return 4
	default:
		return 2
	}
}
