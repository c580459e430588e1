package controller

import (
	"errors"
	"fmt"
)

// controllerStatus is what a broker knows of the active controller.
type controllerStatus struct {
	ControllerID int32 // -1: none known
	IsController bool
	// Epoch and EpochZkVersion are valid when IsController: the epoch this
	// controller stamps on its requests and the /controller_epoch version
	// that fences its ZooKeeper writes.
	Epoch          int32
	EpochZkVersion int32
}

var noController = controllerStatus{ControllerID: -1}

// errControllerMoved: a fenced write found /controller_epoch changed, so
// another controller was elected since ours. Kafka's ControllerMovedException:
// the controller must resign.
var errControllerMoved = errors.New("controller moved: /controller_epoch changed since this controller was elected")

// readControllerEpoch reads /controller_epoch, creating it with 0 if absent
// (so that the first controller's epoch is 1).
func readControllerEpoch(zk zkClient) (epoch, zkVersion int32, err error) {
	for attempt := 0; attempt < 3; attempt++ {
		data, st, err := zk.Get(controllerEpochPath)
		if err == nil {
			epoch, err := decodeControllerEpoch(data)
			return epoch, st.Version, err
		}
		if !errors.Is(err, errNoNode) {
			return 0, 0, fmt.Errorf("reading %s: %w", controllerEpochPath, err)
		}
		_, err = zk.Create(controllerEpochPath, encodeControllerEpoch(0), modePersistent)
		if err == nil {
			return 0, 0, nil
		}
		if !errors.Is(err, errNodeExists) {
			return 0, 0, fmt.Errorf("creating %s: %w", controllerEpochPath, err)
		}
	}
	return 0, 0, fmt.Errorf("%s keeps appearing and vanishing", controllerEpochPath)
}

// readController returns the broker id in /controller, -1 if absent, and
// whether this session owns the node.
func readController(zk zkClient) (id int32, ours bool, err error) {
	data, st, err := zk.Get(controllerPath)
	if errors.Is(err, errNoNode) {
		return -1, false, nil
	}
	if err != nil {
		return -1, false, fmt.Errorf("reading %s: %w", controllerPath, err)
	}
	c, err := decodeControllerZNode(data)
	if err != nil {
		return -1, false, err
	}
	return c.BrokerID, st.EphemeralOwner == zk.Session().ID, nil
}

// electController is one election attempt (KafkaController.elect): if
// /controller exists someone already is controller; otherwise create
// /controller and bump /controller_epoch in one multi conditional on the
// epoch's version, so exactly one contender wins each epoch. nowMs is only
// written into the znode's timestamp.
func electController(zk zkClient, brokerID int32, nowMs int64) (controllerStatus, error) {
	id, ours, err := readController(zk)
	if err != nil {
		return noController, err
	}
	if id != -1 {
		if id == brokerID && ours {
			// Our own node, e.g. a second call in the same session.
			epoch, v, err := readControllerEpoch(zk)
			if err != nil {
				return noController, err
			}
			return controllerStatus{ControllerID: id, IsController: true, Epoch: epoch, EpochZkVersion: v}, nil
		}
		return controllerStatus{ControllerID: id}, nil
	}
	epoch, version, err := readControllerEpoch(zk)
	if err != nil {
		return noController, err
	}
	node := controllerZNode{Version: 2, BrokerID: brokerID, Timestamp: nowMs}
	res, err := zk.Multi(
		&opCreate{Path: controllerPath, Data: node.encode(), Mode: modeEphemeral},
		&opSet{Path: controllerEpochPath, Data: encodeControllerEpoch(epoch + 1), Version: version},
	)
	if err == nil {
		return controllerStatus{ControllerID: brokerID, IsController: true, Epoch: epoch + 1, EpochZkVersion: res[1].Stat.Version}, nil
	}
	if !errors.Is(err, errNodeExists) && !errors.Is(err, errBadVersion) {
		return noController, fmt.Errorf("controller election: %w", err)
	}
	// Lost the race, or our own retried multi had succeeded: only the
	// latter leaves /controller naming us at epoch+1.
	id, ours, err = readController(zk)
	if err != nil {
		return noController, err
	}
	now, v, err := readControllerEpoch(zk)
	if err != nil {
		return noController, err
	}
	if id == brokerID && ours && now == epoch+1 {
		return controllerStatus{ControllerID: id, IsController: true, Epoch: now, EpochZkVersion: v}, nil
	}
	return controllerStatus{ControllerID: id}, nil
}

// controllerWrite applies ops only if /controller_epoch is still at the
// version this controller was elected with (KafkaZkClient
// .wrapRequestWithControllerEpochCheck). A failed check is errControllerMoved;
// any other failure is the op's own error. Results exclude the check.
func controllerWrite(zk zkClient, epochZkVersion int32, ops ...zkOp) ([]zkOpResult, error) {
	all := append([]zkOp{&opCheck{Path: controllerEpochPath, Version: epochZkVersion}}, ops...)
	res, err := zk.Multi(all...)
	if err != nil {
		var me *multiError
		if errors.As(err, &me) && me.Index == 0 {
			return nil, errControllerMoved
		}
		return nil, err
	}
	return res[1:], nil
}

// resignController deletes /controller, fenced by the epoch version, so
// that another broker is elected (Kafka does this when failover fails).
// Already gone is fine.
func resignController(zk zkClient, epochZkVersion int32) error {
	_, err := controllerWrite(zk, epochZkVersion, &opDelete{Path: controllerPath, Version: -1})
	if errors.Is(err, errNoNode) {
		return nil
	}
	return err
}
