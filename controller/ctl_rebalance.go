package controller

import (
	"github.com/kbroker/kbroker/kafkazk"
)

// ElectionType is ElectLeaders' election type (KIP-460).
type ElectionType int8

const (
	ElectPreferred ElectionType = 0
	ElectUnclean   ElectionType = 1
)

// electLeadersAPI is ElectLeaders on the controller
// (KafkaController.processReplicaLeaderElection), the executor of
// decideElectLeaders and electLeadersResults. partitions nil means every
// partition. Each partition's result is nil (elected) or a kerr error /
// *kafkazk.KafkaError.
func (c *Controller) electLeadersAPI(typ ElectionType, partitions []kafkazk.TopicPartition) (map[kafkazk.TopicPartition]error, error) {
	d := decideElectLeaders(c.ctx, typ, partitions)
	b := newRequestBatch(c.ctx)
	failed, err := c.electLeaders(b, d.candidates, d.kind, d.adminUnclean)
	c.sendBatch(b)
	if err != nil {
		return nil, err
	}
	electLeadersResults(typ, d, failed)
	return d.results, nil
}

// processAutoPreferredReplicaLeaderElection is the leader.imbalance check,
// run on a tick event: it executes decideAutoRebalance.
func (c *Controller) processAutoPreferredReplicaLeaderElection() error {
	tps := decideAutoRebalance(c.ctx, c.cfg.AutoLeaderRebalance, c.cfg.ImbalancePerBrokerPct)
	if len(tps) == 0 {
		return nil
	}
	c.log.Info("leader imbalance: preferred replica election", "partitions", len(tps))
	b := newRequestBatch(c.ctx)
	_, err := c.electLeaders(b, tps, preferredElection, false)
	c.sendBatch(b)
	return err
}
