package kafkazk

import (
	"fmt"
	"strconv"
	"strings"
)

// Kafka 3.9's ZooKeeper paths (kafka.zk.ZkData).
const (
	ControllerPath               = "/controller"
	ControllerEpochPath          = "/controller_epoch"
	brokersPath                  = "/brokers"
	BrokerIDsPath                = "/brokers/ids"
	BrokerTopicsPath             = "/brokers/topics"
	brokerSeqIDPath              = "/brokers/seqid"
	IsrChangeNotificationPath    = "/isr_change_notification"
	IsrChangePrefix              = "isr_change_"
	LogDirEventNotificationPath  = "/log_dir_event_notification"
	LogDirEventPrefix            = "log_dir_event_"
	configPath                   = "/config"
	ConfigChangesPath            = "/config/changes"
	ConfigChangePrefix           = "config_change_"
	adminPath                    = "/admin"
	DeleteTopicsPath             = "/admin/delete_topics"
	reassignPartitionsPath       = "/admin/reassign_partitions"
	PreferredReplicaElectionPath = "/admin/preferred_replica_election"
	clusterIDPath                = "/cluster/id"
	featurePath                  = "/feature"
	ProducerIDBlockPath          = "/latest_producer_id_block"
	consumersPath                = "/consumers"
)

// Config entity types under /config.
const (
	ConfigTypeTopic  = "topics"
	configTypeClient = "clients"
	ConfigTypeUser   = "users"
	configTypeBroker = "brokers"
	configTypeIP     = "ips"
)

// persistentZkPaths are created (empty, if absent) by every broker at
// start-up (ZkData.PersistentZkPaths); sequential notification nodes need
// their parents to exist. Parents come before children.
var persistentZkPaths = []string{
	consumersPath,
	BrokerIDsPath,
	BrokerTopicsPath,
	ConfigChangesPath,
	DeleteTopicsPath,
	brokerSeqIDPath,
	IsrChangeNotificationPath,
	ProducerIDBlockPath,
	LogDirEventNotificationPath,
	configPath + "/" + ConfigTypeTopic,
	configPath + "/" + configTypeClient,
	configPath + "/" + ConfigTypeUser,
	configPath + "/" + configTypeBroker,
	configPath + "/" + configTypeIP,
}

// BrokerIDPath is a broker's registration.
func BrokerIDPath(id int32) string { return BrokerIDsPath + "/" + strconv.Itoa(int(id)) }

// TopicPath is a topic's assignment.
func TopicPath(topic string) string { return BrokerTopicsPath + "/" + topic }

func topicPartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// TopicPartitionPath is a partition's znode, the parent of its state.
func TopicPartitionPath(topic string, p int32) string {
	return topicPartitionsPath(topic) + "/" + strconv.Itoa(int(p))
}

// PartitionStatePath is a partition's state znode.
func PartitionStatePath(topic string, p int32) string {
	return TopicPartitionPath(topic, p) + "/state"
}

// ConfigEntityPath is an entity's config overrides, e.g. a topic's.
func ConfigEntityPath(entityType, name string) string {
	return configPath + "/" + entityType + "/" + name
}

// DeleteTopicPath marks a topic for deletion.
func DeleteTopicPath(topic string) string { return DeleteTopicsPath + "/" + topic }

// ParseBrokerID reads a child name of /brokers/ids.
func ParseBrokerID(name string) (int32, error) {
	v, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("broker znode %q: not a broker id", name)
	}
	return int32(v), nil
}

// SequenceNumber is the counter of a sequential child name such as
// isr_change_0000000042.
func SequenceNumber(name, prefix string) (int64, error) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, fmt.Errorf("znode %q does not start with %q", name, prefix)
	}
	return strconv.ParseInt(s, 10, 64)
}
