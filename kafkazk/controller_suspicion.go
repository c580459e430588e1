package kafkazk

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kbroker/kbroker/zkstore"
)

// ControllerSuspicionsPath is kbroker's own (no Kafka broker reads or
// writes it): every broker that finds the controller unresponsive holds an
// ephemeral child here, named after the controller's incarnation and its
// own id. One broker's finding may only mean that this broker is the one cut
// off; a majority of the other brokers agreeing means the controller is.
const ControllerSuspicionsPath = "/kbroker/controller_suspicions"

func suspicionPrefix(controllerID int32, controllerEpoch int64) string {
	return fmt.Sprintf("%d-%d-", controllerID, controllerEpoch)
}

// SuspectController records that voterID finds the controller incarnation
// (controllerID, its broker epoch) unresponsive, and returns how many
// brokers now do. The record is ephemeral: it goes with the voter's
// session, or with WithdrawSuspicion.
func SuspectController(zk zkstore.Client, controllerID int32, controllerEpoch int64, voterID int32) (int, error) {
	if err := CreateRecursive(zk, ControllerSuspicionsPath); err != nil {
		return 0, err
	}
	prefix := suspicionPrefix(controllerID, controllerEpoch)
	_, err := zk.Create(ControllerSuspicionsPath+"/"+prefix+fmt.Sprint(voterID), nil, zkstore.ModeEphemeral)
	if err != nil && !errors.Is(err, zkstore.ErrNodeExists) {
		return 0, fmt.Errorf("recording suspicion of controller %d: %w", controllerID, err)
	}
	children, _, err := zk.Children(ControllerSuspicionsPath)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", ControllerSuspicionsPath, err)
	}
	n := 0
	for _, c := range children {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n, nil
}

// WithdrawSuspicion removes voterID's record about the controller
// incarnation, if any.
func WithdrawSuspicion(zk zkstore.Client, controllerID int32, controllerEpoch int64, voterID int32) error {
	err := zk.Delete(ControllerSuspicionsPath+"/"+suspicionPrefix(controllerID, controllerEpoch)+fmt.Sprint(voterID), -1)
	if err != nil && !errors.Is(err, zkstore.ErrNoNode) {
		return err
	}
	return nil
}

// SuspectedControllers counts the suspicion records by controller
// incarnation: broker id and broker epoch.
func SuspectedControllers(zk zkstore.Client) (map[[2]int64]int, error) {
	children, _, err := zk.Children(ControllerSuspicionsPath)
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ControllerSuspicionsPath, err)
	}
	out := map[[2]int64]int{}
	for _, c := range children {
		var id, epoch, voter int64
		if _, err := fmt.Sscanf(c, "%d-%d-%d", &id, &epoch, &voter); err != nil {
			continue
		}
		out[[2]int64{id, epoch}]++
	}
	return out, nil
}
