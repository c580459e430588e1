package controller

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/zkstore"
)

// maxStateWriteRounds bounds the read–decide–write loop of updateLeadership.
// Kafka loops until no partition conflicts; a leader rewriting the ISR can
// cause a conflict or two, never an endless stream, so a partition that still
// conflicts after this many rounds is failed (and retried by the next event
// that touches it).
const maxStateWriteRounds = 10

// readLeadership reads a state znode from ZooKeeper. ok is false when it
// does not exist.
func (c *Controller) readLeadership(tp kafkazk.TopicPartition) (st partitionLeadership, ok bool, err error) {
	data, stat, err := c.zk.Get(kafkazk.PartitionStatePath(tp.Topic, tp.Partition))
	if errors.Is(err, zkstore.ErrNoNode) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	z, err := kafkazk.DecodePartitionStateZNode(data)
	if err != nil {
		return st, false, err
	}
	return leadershipFromZNode(z, stat.Version), true, nil
}

func leadershipFromZNode(z kafkazk.PartitionStateZNode, version int32) partitionLeadership {
	return partitionLeadership{
		leaderAndIsr: leaderAndIsr{
			Leader:              z.Leader,
			LeaderEpoch:         z.LeaderEpoch,
			ISR:                 z.ISR,
			LeaderRecoveryState: z.LeaderRecoveryState,
			PartitionEpoch:      version,
		},
		ControllerEpoch: z.ControllerEpoch,
	}
}

func (st partitionLeadership) znode() kafkazk.PartitionStateZNode {
	return kafkazk.PartitionStateZNode{
		Leader:              st.Leader,
		LeaderEpoch:         st.LeaderEpoch,
		ISR:                 st.ISR,
		ControllerEpoch:     st.ControllerEpoch,
		LeaderRecoveryState: st.LeaderRecoveryState,
	}
}

// decision is what a strategy wants for one partition. change false:
// nothing to write. err: the partition fails (it keeps its state).
// needUncleanConfig: the strategy cannot decide without the topic's
// unclean.leader.election.enable; the executor reads it and asks again.
// unclean: the new leader was not in the ISR (the executor warns).
type decision struct {
	change            bool
	next              leaderAndIsr
	recipients        []int32
	err               error
	needUncleanConfig bool
	unclean           bool
}

// errWrittenByNewerController: a state znode carries a controller epoch
// above ours, so a newer controller has decided; we keep out, as
// PartitionStateMachine does.
var errWrittenByNewerController = errors.New("partition state written by a newer controller")

// updateLeadership is PartitionStateMachine's doElectLeaderForPartitions
// loop, the executor of the leadership decisions: for each partition
// re-read the state znode, decide (a pure function of the context, the
// state read and the inputs it asks for, which are read here), write
// conditionally on the version read (fenced by our epoch), and redo the
// partitions whose write met a concurrent change. Successful writes update
// the context and queue LeaderAndIsr to the decision's recipients (plus
// UpdateMetadata to all). Returns per-partition failures; the error is fatal
// (controller moved, session lost).
func (c *Controller) updateLeadership(b *requestBatch, tps []kafkazk.TopicPartition, decide func(tp kafkazk.TopicPartition, cur partitionLeadership, in decisionInputs) decision) (map[kafkazk.TopicPartition]error, error) {
	failed := map[kafkazk.TopicPartition]error{}
	remaining := tps
	for round := 0; len(remaining) > 0; round++ {
		if round == maxStateWriteRounds {
			for _, tp := range remaining {
				failed[tp] = fmt.Errorf("state of %s-%d keeps changing: %w", tp.Topic, tp.Partition, zkstore.ErrBadVersion)
			}
			break
		}
		var retry []kafkazk.TopicPartition
		for _, tp := range remaining {
			cur, ok, err := c.readLeadership(tp)
			if err != nil {
				if isFatalZKError(err) {
					return failed, err
				}
				failed[tp] = err
				continue
			}
			if !ok {
				failed[tp] = fmt.Errorf("no state znode for %s-%d", tp.Topic, tp.Partition)
				continue
			}
			if cur.ControllerEpoch > c.epoch {
				failed[tp] = errWrittenByNewerController
				continue
			}
			// The cache follows ZooKeeper, whatever we decide.
			c.ctx.leadership[tp] = cur
			d := decide(tp, cur, decisionInputs{})
			if d.needUncleanConfig {
				enabled, err := c.uncleanLeaderElectionEnabled(tp.Topic)
				if err != nil {
					failed[tp] = err
					continue
				}
				d = decide(tp, cur, decisionInputs{uncleanEnabled: map[string]bool{tp.Topic: enabled}})
			}
			if d.unclean {
				c.log.Warn("unclean leader election: committed data may be lost", "topic", tp.Topic, "partition", tp.Partition, "leader", d.next.Leader)
			}
			if d.err != nil {
				failed[tp] = d.err
				continue
			}
			if !d.change {
				continue
			}
			next := partitionLeadership{leaderAndIsr: d.next, ControllerEpoch: c.epoch}
			res, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpSet{
				Path:    kafkazk.PartitionStatePath(tp.Topic, tp.Partition),
				Data:    next.znode().Encode(),
				Version: cur.PartitionEpoch,
			})
			switch {
			case errors.Is(err, zkstore.ErrBadVersion):
				retry = append(retry, tp)
				continue
			case err != nil && isFatalZKError(err):
				return failed, err
			case err != nil:
				failed[tp] = err
				continue
			}
			next.PartitionEpoch = res[0].Stat.Version
			c.ctx.leadership[tp] = next
			a, _ := c.ctx.assignment(tp)
			if next.Leader != noLeader && c.ctx.isLive(next.Leader) {
				c.ctx.states[tp] = partitionOnline
			} else {
				c.ctx.states[tp] = partitionOffline
			}
			if !c.ctx.topicsToDelete[tp.Topic] {
				b.addLeaderAndIsr(d.recipients, tp, next, a, false)
			}
		}
		remaining = retry
	}
	return failed, nil
}

func isFatalZKError(err error) bool {
	return errors.Is(err, kafkazk.ErrControllerMoved) || errors.Is(err, zkstore.ErrSessionExpired) ||
		errors.Is(err, zkstore.ErrConnectionClosed) || errors.Is(err, ErrSessionLost)
}

// electionKind is one of the strategies of Election.scala.
type electionKind int

const (
	offlineElection electionKind = iota
	reassignElection
	preferredElection
	controlledShutdownElection
)

// errNoEligibleLeader: the strategy found no replica to lead. Its Kafka
// code depends on the API that asked (ElectLeaders reports
// PREFERRED_LEADER_NOT_AVAILABLE or ELIGIBLE_LEADERS_NOT_AVAILABLE).
var errNoEligibleLeader = errors.New("no eligible leader")

// electLeaders moves partitions to Online with the strategy (Kafka's
// PartitionStateMachine.electLeaderForPartitions). adminUnclean is an
// UNCLEAN ElectLeaders: unclean election allowed whatever the topic says.
func (c *Controller) electLeaders(b *requestBatch, tps []kafkazk.TopicPartition, kind electionKind, adminUnclean bool) (map[kafkazk.TopicPartition]error, error) {
	return c.updateLeadership(b, tps, func(tp kafkazk.TopicPartition, cur partitionLeadership, in decisionInputs) decision {
		return decideElection(c.ctx, tp, cur, kind, adminUnclean, in)
	})
}

func hasLiveISRMember(isr []int32, l liveness) bool {
	return slices.ContainsFunc(isr, func(r int32) bool { return l.online(r, false) })
}

// uncleanLeaderElectionEnabled is the topic's effective
// unclean.leader.election.enable: its override in /config/topics/<t>, else
// the broker default. Read from ZooKeeper at election time, as Kafka does.
func (c *Controller) uncleanLeaderElectionEnabled(topic string) (bool, error) {
	def, err := c.uncleanLeaderElectionDefault()
	if err != nil {
		return false, err
	}
	data, _, err := c.zk.Get(kafkazk.ConfigEntityPath(kafkazk.ConfigTypeTopic, topic))
	if errors.Is(err, zkstore.ErrNoNode) {
		return def, nil
	}
	if err != nil {
		return false, err
	}
	cfg, err := kafkazk.DecodeConfigZNode(data)
	if err != nil {
		return false, err
	}
	return uncleanSetting(cfg, def), nil
}

// uncleanLeaderElectionDefault is the controller broker's
// unclean.leader.election.enable in force: its own dynamic config, else
// the cluster-wide dynamic default, else its static one. Kafka's
// controller reads its broker's current KafkaConfig, which dynamic broker
// configs update (KIP-226).
func (c *Controller) uncleanLeaderElectionDefault() (bool, error) {
	for _, id := range []string{strconv.Itoa(int(c.cfg.BrokerID)), ""} {
		cfg, err := kafkazk.BrokerConfigs(c.zk, id)
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(cfg["unclean.leader.election.enable"])) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return c.cfg.UncleanLeaderElection, nil
}

// initializePartitions executes decideNewPartitions: each first state
// znode is created (fenced), LeaderAndIsr with IsNew goes to the ISR. A
// state znode that already exists (left by an earlier controller) is
// adopted instead, and the partition goes Offline for the offline
// election.
func (c *Controller) initializePartitions(b *requestBatch, tps []kafkazk.TopicPartition) error {
	inits, noLiveReplica := decideNewPartitions(c.ctx, tps, c.epoch)
	for _, tp := range noLiveReplica {
		c.ctx.states[tp] = partitionNew
		c.log.Warn("new partition has no live replica, it stays offline", "topic", tp.Topic, "partition", tp.Partition)
	}
	for _, in := range inits {
		tp, st, a := in.tp, in.st, in.assignment
		if err := kafkazk.CreateRecursive(c.zk, kafkazk.TopicPartitionPath(tp.Topic, tp.Partition)); err != nil {
			if isFatalZKError(err) {
				return err
			}
			c.log.Error("creating partition path", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			continue
		}
		_, err := kafkazk.ControllerWrite(c.zk, c.epochZkVersion, &zkstore.OpCreate{
			Path: kafkazk.PartitionStatePath(tp.Topic, tp.Partition),
			Data: st.znode().Encode(),
			Mode: zkstore.ModePersistent,
		})
		if errors.Is(err, zkstore.ErrNodeExists) {
			existing, ok, rerr := c.readLeadership(tp)
			if rerr != nil || !ok {
				c.log.Error("reading existing partition state", "topic", tp.Topic, "partition", tp.Partition, "err", rerr)
				continue
			}
			c.ctx.leadership[tp] = existing
			c.ctx.states[tp] = partitionOffline
			continue
		}
		if err != nil {
			if isFatalZKError(err) {
				return err
			}
			c.log.Error("creating partition state", "topic", tp.Topic, "partition", tp.Partition, "err", err)
			continue
		}
		c.ctx.leadership[tp] = st
		c.ctx.states[tp] = partitionOnline
		b.addLeaderAndIsr(st.ISR, tp, st, a, true)
	}
	return nil
}

// triggerOnlinePartitionStateChange elects leaders for every New or
// Offline partition of topics not being deleted (Kafka's
// triggerOnlinePartitionStateChange).
func (c *Controller) triggerOnlinePartitionStateChange(b *requestBatch) error {
	var fresh, offline []kafkazk.TopicPartition
	for _, tp := range c.ctx.allPartitions() {
		if c.ctx.topicsToDelete[tp.Topic] {
			continue
		}
		switch c.ctx.states[tp] {
		case partitionNew, partitionNonExistent:
			if _, ok := c.ctx.leadership[tp]; ok {
				offline = append(offline, tp)
			} else {
				fresh = append(fresh, tp)
			}
		case partitionOffline:
			offline = append(offline, tp)
		}
	}
	if err := c.initializePartitions(b, fresh); err != nil {
		return err
	}
	// Partitions adopted from an existing state znode went Offline above.
	for _, tp := range fresh {
		if c.ctx.states[tp] == partitionOffline {
			offline = append(offline, tp)
		}
	}
	failed, err := c.electLeaders(b, offline, offlineElection, false)
	for tp, e := range failed {
		c.log.Warn("partition stays offline", "topic", tp.Topic, "partition", tp.Partition, "err", e)
	}
	return err
}

// refreshPartitionState marks a partition Online or Offline from its
// cached leadership.
func (c *Controller) refreshPartitionState(tp kafkazk.TopicPartition) {
	st, ok := c.ctx.leadership[tp]
	if !ok {
		c.ctx.states[tp] = partitionNew
		return
	}
	c.ctx.states[tp] = stateFromLeadership(c.ctx, tp, st)
}
