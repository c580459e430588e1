package controller

import (
	"fmt"
	"strconv"
	"strings"
)

// Kafka 3.9's ZooKeeper paths (kafka.zk.ZkData).
const (
	controllerPath               = "/controller"
	controllerEpochPath          = "/controller_epoch"
	brokersPath                  = "/brokers"
	brokerIDsPath                = "/brokers/ids"
	brokerTopicsPath             = "/brokers/topics"
	brokerSeqIDPath              = "/brokers/seqid"
	isrChangeNotificationPath    = "/isr_change_notification"
	isrChangePrefix              = "isr_change_"
	logDirEventNotificationPath  = "/log_dir_event_notification"
	logDirEventPrefix            = "log_dir_event_"
	configPath                   = "/config"
	configChangesPath            = "/config/changes"
	configChangePrefix           = "config_change_"
	adminPath                    = "/admin"
	deleteTopicsPath             = "/admin/delete_topics"
	reassignPartitionsPath       = "/admin/reassign_partitions"
	preferredReplicaElectionPath = "/admin/preferred_replica_election"
	clusterIDPath                = "/cluster/id"
	featurePath                  = "/feature"
	producerIDBlockPath          = "/latest_producer_id_block"
	consumersPath                = "/consumers"
)

// Config entity types under /config.
const (
	configTypeTopic  = "topics"
	configTypeClient = "clients"
	configTypeUser   = "users"
	configTypeBroker = "brokers"
	configTypeIP     = "ips"
)

// persistentZkPaths are created (empty, if absent) by every broker at
// start-up (ZkData.PersistentZkPaths); sequential notification nodes need
// their parents to exist. Parents come before children.
var persistentZkPaths = []string{
	consumersPath,
	brokerIDsPath,
	brokerTopicsPath,
	configChangesPath,
	deleteTopicsPath,
	brokerSeqIDPath,
	isrChangeNotificationPath,
	producerIDBlockPath,
	logDirEventNotificationPath,
	configPath + "/" + configTypeTopic,
	configPath + "/" + configTypeClient,
	configPath + "/" + configTypeUser,
	configPath + "/" + configTypeBroker,
	configPath + "/" + configTypeIP,
}

func brokerIDPath(id int32) string { return brokerIDsPath + "/" + strconv.Itoa(int(id)) }

func topicPath(topic string) string { return brokerTopicsPath + "/" + topic }

func topicPartitionsPath(topic string) string { return topicPath(topic) + "/partitions" }

func topicPartitionPath(topic string, p int32) string {
	return topicPartitionsPath(topic) + "/" + strconv.Itoa(int(p))
}

func partitionStatePath(topic string, p int32) string {
	return topicPartitionPath(topic, p) + "/state"
}

func configEntityPath(entityType, name string) string {
	return configPath + "/" + entityType + "/" + name
}

func deleteTopicPath(topic string) string { return deleteTopicsPath + "/" + topic }

// parseBrokerID reads a child name of /brokers/ids.
func parseBrokerID(name string) (int32, error) {
	v, err := strconv.ParseInt(name, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("broker znode %q: not a broker id", name)
	}
	return int32(v), nil
}

// sequenceNumber is the counter of a sequential child name such as
// isr_change_0000000042.
func sequenceNumber(name, prefix string) (int64, error) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, fmt.Errorf("znode %q does not start with %q", name, prefix)
	}
	return strconv.ParseInt(s, 10, 64)
}
