package metadataversion

// What a version decides (Kafka's MetadataVersion predicates, and the
// request versions its ControllerChannelManager and replica fetcher pick).

// AlterPartition: partition leaders ask the controller for ISR changes
// (AlterPartition, KIP-497) instead of writing the state znode and
// announcing the change under /isr_change_notification.
func (v Version) AlterPartition() bool { return v.AtLeast(v2_7_IV2) }

// TopicIDs: topics have ids, written into /brokers/topics/<t> and sent in
// LeaderAndIsr and UpdateMetadata (KIP-516).
func (v Version) TopicIDs() bool { return v.AtLeast(v2_8_IV0) }

// AllocateProducerIDs: brokers ask the controller for producer id blocks
// (AllocateProducerIds, KIP-730) instead of writing
// /latest_producer_id_block themselves.
func (v Version) AllocateProducerIDs() bool { return v.AtLeast(v3_0_IV0) }

// FeatureVersioning: the controller keeps /feature enabled and brokers
// register with their supported features (registration version 5, KIP-584).
func (v Version) FeatureVersioning() bool { return v.AtLeast(v2_7_IV0) }

// TruncationOnFetch: followers send their last fetched epoch and truncate
// on the leader's diverging epoch (Fetch v12+, KIP-595) instead of asking
// OffsetForLeaderEpoch first.
func (v Version) TruncationOnFetch() bool { return v.AtLeast(v2_7_IV1) }

// LeaderRecovery: an unclean election marks the partition RECOVERING in
// its state znode (KIP-704).
func (v Version) LeaderRecovery() bool { return v.AtLeast(v3_2_IV0) }

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

// FetchVersion is the Fetch version followers send.
func (v Version) FetchVersion() int16 {
	switch {
	case v.AtLeast(v3_9_IV0):
		return 17
	case v.AtLeast(v3_7_IV4):
		return 16
	case v.AtLeast(v3_5_IV1):
		return 15
	case v.AtLeast(v3_5_IV0):
		return 14
	case v.AtLeast(v3_1_IV0):
		return 13
	case v.AtLeast(v2_7_IV1):
		return 12
	default:
		// Below 2.7-IV1 a follower truncates through OffsetForLeaderEpoch
		// before fetching; Fetch v11 (2.3-IV1) is the oldest a kbroker
		// follower sends.
		return 11
	}
}

// LeaderAndIsrVersion, UpdateMetadataVersion and StopReplicaVersion are the
// versions a controller sends.
func (v Version) LeaderAndIsrVersion() int16 {
	switch {
	case v.AtLeast(v3_4_IV0):
		return 7
	case v.AtLeast(v3_2_IV0):
		return 6
	case v.AtLeast(v2_8_IV1):
		return 5
	case v.AtLeast(v2_4_IV1):
		return 4
	case v.AtLeast(v2_4_IV0):
		return 3
	case v.AtLeast(v2_2_IV0):
		return 2
	case v.AtLeast(v1_0_IV0):
		return 1
	default:
		return 0
	}
}

// UpdateMetadataVersion: see LeaderAndIsrVersion.
func (v Version) UpdateMetadataVersion() int16 {
	switch {
	case v.AtLeast(v3_4_IV0):
		return 8
	case v.AtLeast(v2_8_IV1):
		return 7
	case v.AtLeast(v2_4_IV1):
		return 6
	case v.AtLeast(v2_2_IV0):
		return 5
	case v.AtLeast(v1_0_IV0):
		return 4
	default:
		return 3
	}
}

// StopReplicaVersion: see LeaderAndIsrVersion.
func (v Version) StopReplicaVersion() int16 {
	switch {
	case v.AtLeast(v3_4_IV0):
		return 4
	case v.AtLeast(v2_6_IV0):
		return 3
	case v.AtLeast(v2_4_IV1):
		return 2
	case v.AtLeast(v2_2_IV0):
		return 1
	default:
		return 0
	}
}

// OffsetForLeaderEpochVersion is the version a follower asks its leader
// with (KIP-101/KIP-279/KIP-320).
func (v Version) OffsetForLeaderEpochVersion() int16 {
	switch {
	case v.AtLeast(v2_8_IV0):
		return 4
	case v.AtLeast(mustParse("2.3-IV1")):
		return 3
	case v.AtLeast(mustParse("2.1-IV1")):
		return 2
	case v.AtLeast(mustParse("2.0-IV0")):
		return 1
	default:
		return 0
	}
}

// ListOffsetsVersion is the version a follower asks its leader's offsets
// with.
func (v Version) ListOffsetsVersion() int16 {
	switch {
	case v.AtLeast(v3_9_IV0):
		return 9
	case v.AtLeast(v3_5_IV0):
		return 8
	case v.AtLeast(mustParse("3.0-IV1")):
		return 7
	case v.AtLeast(v2_8_IV0):
		return 6
	case v.AtLeast(mustParse("2.2-IV1")):
		return 5
	case v.AtLeast(mustParse("2.1-IV1")):
		return 4
	default:
		return 3
	}
}
