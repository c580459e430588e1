package kafkazk

import (
	"errors"
	"fmt"

	"github.com/kbroker/kbroker/zkstore"
)

// ControllerStatus is what a broker knows of the active controller.
type ControllerStatus struct {
	ControllerID int32 // -1: none known
	IsController bool
	// Epoch and EpochZkVersion are valid when IsController: the epoch this
	// controller stamps on its requests and the /controller_epoch version
	// that fences its ZooKeeper writes.
	Epoch          int32
	EpochZkVersion int32
}

// NoController is the status while no controller is known.
var NoController = ControllerStatus{ControllerID: -1}

// ErrControllerMoved: a fenced write found /controller_epoch changed, so
// another controller was elected since ours. Kafka's ControllerMovedException:
// the controller must resign.
var ErrControllerMoved = errors.New("controller moved: /controller_epoch changed since this controller was elected")

// readControllerEpoch reads /controller_epoch, creating it with 0 if absent
// (so that the first controller's epoch is 1).
func readControllerEpoch(zk zkstore.Client) (epoch, zkVersion int32, err error) {
	for attempt := 0; attempt < 3; attempt++ {
		data, st, err := zk.Get(ControllerEpochPath)
		if err == nil {
			epoch, err := DecodeControllerEpoch(data)
			return epoch, st.Version, err
		}
		if !errors.Is(err, zkstore.ErrNoNode) {
			return 0, 0, fmt.Errorf("reading %s: %w", ControllerEpochPath, err)
		}
		_, err = zk.Create(ControllerEpochPath, encodeControllerEpoch(0), zkstore.ModePersistent)
		if err == nil {
			return 0, 0, nil
		}
		if !errors.Is(err, zkstore.ErrNodeExists) {
			return 0, 0, fmt.Errorf("creating %s: %w", ControllerEpochPath, err)
		}
	}
	return 0, 0, fmt.Errorf("%s keeps appearing and vanishing", ControllerEpochPath)
}

// ReadController returns the broker id in /controller, -1 if absent, and
// whether this session owns the node.
func ReadController(zk zkstore.Client) (id int32, ours bool, err error) {
	data, st, err := zk.Get(ControllerPath)
	if errors.Is(err, zkstore.ErrNoNode) {
		return -1, false, nil
	}
	if err != nil {
		return -1, false, fmt.Errorf("reading %s: %w", ControllerPath, err)
	}
	c, err := decodeControllerZNode(data)
	if err != nil {
		return -1, false, err
	}
	return c.BrokerID, st.EphemeralOwner == zk.Session().ID, nil
}

// ElectController is one election attempt (KafkaController.elect): if
// /controller exists someone already is controller; otherwise create
// /controller and bump /controller_epoch in one multi conditional on the
// epoch's version, so exactly one contender wins each epoch. nowMs is only
// written into the znode's timestamp.
func ElectController(zk zkstore.Client, brokerID int32, nowMs int64) (ControllerStatus, error) {
	id, ours, err := ReadController(zk)
	if err != nil {
		return NoController, err
	}
	if id != -1 {
		if id == brokerID && ours {
			// Our own node, e.g. a second call in the same session.
			epoch, v, err := readControllerEpoch(zk)
			if err != nil {
				return NoController, err
			}
			return ControllerStatus{ControllerID: id, IsController: true, Epoch: epoch, EpochZkVersion: v}, nil
		}
		return ControllerStatus{ControllerID: id}, nil
	}
	epoch, version, err := readControllerEpoch(zk)
	if err != nil {
		return NoController, err
	}
	node := controllerZNode{Version: 2, BrokerID: brokerID, Timestamp: nowMs}
	res, err := zk.Multi(
		&zkstore.OpCreate{Path: ControllerPath, Data: node.encode(), Mode: zkstore.ModeEphemeral},
		&zkstore.OpSet{Path: ControllerEpochPath, Data: encodeControllerEpoch(epoch + 1), Version: version},
	)
	if err == nil {
		return ControllerStatus{ControllerID: brokerID, IsController: true, Epoch: epoch + 1, EpochZkVersion: res[1].Stat.Version}, nil
	}
	if !errors.Is(err, zkstore.ErrNodeExists) && !errors.Is(err, zkstore.ErrBadVersion) {
		return NoController, fmt.Errorf("controller election: %w", err)
	}
	// Lost the race, or our own retried multi had succeeded: only the
	// latter leaves /controller naming us at epoch+1.
	id, ours, err = ReadController(zk)
	if err != nil {
		return NoController, err
	}
	now, v, err := readControllerEpoch(zk)
	if err != nil {
		return NoController, err
	}
	if id == brokerID && ours && now == epoch+1 {
		return ControllerStatus{ControllerID: id, IsController: true, Epoch: now, EpochZkVersion: v}, nil
	}
	return ControllerStatus{ControllerID: id}, nil
}

// ControllerWrite applies ops only if /controller_epoch is still at the
// version this controller was elected with (KafkaZkClient
// .wrapRequestWithControllerEpochCheck). A failed check is ErrControllerMoved;
// any other failure is the op's own error. Results exclude the check.
func ControllerWrite(zk zkstore.Client, epochZkVersion int32, ops ...zkstore.Op) ([]zkstore.OpResult, error) {
	all := append([]zkstore.Op{&zkstore.OpCheck{Path: ControllerEpochPath, Version: epochZkVersion}}, ops...)
	res, err := zk.Multi(all...)
	if err != nil {
		var me *zkstore.MultiError
		if errors.As(err, &me) && me.Index == 0 {
			return nil, ErrControllerMoved
		}
		return nil, err
	}
	return res[1:], nil
}

// ResignController deletes /controller, fenced by the epoch version, so
// that another broker is elected (Kafka does this when failover fails).
// Already gone is fine.
func ResignController(zk zkstore.Client, epochZkVersion int32) error {
	_, err := ControllerWrite(zk, epochZkVersion, &zkstore.OpDelete{Path: ControllerPath, Version: -1})
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil
	}
	return err
}

// DeposeController deletes /controller if it still names brokerID and is
// owned by session: the ZooKeeper session of the broker registration that
// was found dead. A /controller of any later election, or of the same
// broker in a new session, is left alone. It reports whether it deleted.
func DeposeController(zk zkstore.Client, brokerID int32, session int64) (bool, error) {
	data, st, err := zk.Get(ControllerPath)
	if errors.Is(err, zkstore.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", ControllerPath, err)
	}
	c, err := decodeControllerZNode(data)
	if err != nil {
		return false, err
	}
	if c.BrokerID != brokerID || st.EphemeralOwner != session {
		return false, nil
	}
	// The version check makes the delete miss a node created again
	// between the read and the delete (a new one starts at version 0 too,
	// so the owner check above is what tells two tenures apart; the gap
	// between the two calls is all that is left open).
	err = zk.Delete(ControllerPath, st.Version)
	if errors.Is(err, zkstore.ErrNoNode) || errors.Is(err, zkstore.ErrBadVersion) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting %s: %w", ControllerPath, err)
	}
	return true, nil
}
