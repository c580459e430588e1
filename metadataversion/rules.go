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

// TopicIDs: topics get ids (KIP-516): new topic znodes carry one, the
// controller gives one to a topic without, and requests name topics by it
// (Kafka's usesTopicId in ZooKeeper mode).
func (v Version) TopicIDs() bool { return v.AtLeast(v2_8_IV0) }

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

// The controller's request versions (Kafka's ControllerChannelManager,
// sendLeaderAndIsrRequest, sendUpdateMetadataRequests,
// sendStopReplicaRequests): a broker at an older IBP may not understand
// newer ones.

// LeaderAndIsrVersion is the LeaderAndIsr version a controller sends.
func (v Version) LeaderAndIsrVersion() int16 {
	return pick(v, []step{{v3_4_IV0, 7}, {v3_2_IV0, 6}, {v2_8_IV1, 5}, {v2_4_IV1, 4}, {v2_4_IV0, 3}, {v2_2_IV0, 2}, {v1_0_IV0, 1}})
}

// UpdateMetadataVersion is the UpdateMetadata version a controller sends.
func (v Version) UpdateMetadataVersion() int16 {
	return pick(v, []step{{v3_4_IV0, 8}, {v2_8_IV1, 7}, {v2_4_IV1, 6}, {v2_2_IV0, 5}, {v1_0_IV0, 4}, {v0_10_2_IV0, 3}, {v0_10_0_IV1, 2}, {v0_9_0, 1}})
}

// StopReplicaVersion is the StopReplica version a controller sends.
func (v Version) StopReplicaVersion() int16 {
	return pick(v, []step{{v3_4_IV0, 4}, {v2_6_IV0, 3}, {v2_4_IV1, 2}, {v2_2_IV0, 1}})
}

// step: from version from on, a request goes out as version out.
type step struct {
	from Version
	out  int16
}

// pick is the first step, newest first, that v reaches; 0 below them all.
func pick(v Version, steps []step) int16 {
	for _, s := range steps {
		if v.AtLeast(s.from) {
			return s.out
		}
	}
	return 0
}
