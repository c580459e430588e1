package kafkazk

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"

	"github.com/kbroker/kbroker/zkstore"
)

// CreateTopLevelPaths creates the persistent paths every broker creates at
// start-up (ZkData.PersistentZkPaths), empty, if absent.
func CreateTopLevelPaths(zk zkstore.Client) error {
	for _, p := range persistentZkPaths {
		if err := CreateRecursive(zk, p); err != nil {
			return err
		}
	}
	return nil
}

// CreateRecursive creates path and its missing parents as empty persistent
// nodes; existing nodes are left alone.
func CreateRecursive(zk zkstore.Client, path string) error {
	if ok, _, err := zk.Exists(path); err != nil || ok {
		return err
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		if _, err := zk.Create(p, nil, zkstore.ModePersistent); err != nil && !errors.Is(err, zkstore.ErrNodeExists) {
			return fmt.Errorf("creating %s: %w", p, err)
		}
	}
	return nil
}

// EnsureClusterID returns the cluster id from /cluster/id, creating the
// node with newID() when this is the first broker of the cluster. Two first
// brokers racing agree on whichever created it.
func EnsureClusterID(zk zkstore.Client, newID func() string) (string, error) {
	for attempt := 0; attempt < 3; attempt++ {
		data, _, err := zk.Get(clusterIDPath)
		if err == nil {
			return decodeClusterID(data)
		}
		if !errors.Is(err, zkstore.ErrNoNode) {
			return "", fmt.Errorf("reading %s: %w", clusterIDPath, err)
		}
		if err := CreateRecursive(zk, "/cluster"); err != nil {
			return "", err
		}
		id := newID()
		_, err = zk.Create(clusterIDPath, encodeClusterID(id), zkstore.ModePersistent)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, zkstore.ErrNodeExists) {
			return "", fmt.Errorf("creating %s: %w", clusterIDPath, err)
		}
	}
	return "", fmt.Errorf("%s keeps appearing and vanishing", clusterIDPath)
}

// NewClusterID is Kafka's Uuid.randomUuid().toString(): 16 random bytes,
// URL-safe base64 without padding.
func NewClusterID() string {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(err)
	}
	return EncodeUUID(id)
}

// BrokerRegisteredError: another live session, Owner, holds
// /brokers/ids/<id>: a broker with the same id, or this broker's previous
// run whose session has not expired yet.
type BrokerRegisteredError struct {
	ID    int32
	Owner int64
}

func (e *BrokerRegisteredError) Error() string {
	return fmt.Sprintf("broker id %d is already registered", e.ID)
}

// RegisterBroker creates the ephemeral /brokers/ids/<id> and returns the
// broker epoch, the node's czxid (KIP-380).
//
// As Kafka (KafkaZkClient.registerBroker), the node is created empty and
// its data set at version 0 in one multi, so a registration has data
// version 1. If the node exists and this session owns it (a retried
// request that did succeed), that registration stands.
func RegisterBroker(zk zkstore.Client, id int32, info BrokerZNode) (int64, error) {
	path := BrokerIDPath(id)
	res, err := zk.Multi(
		&zkstore.OpCreate{Path: path, Mode: zkstore.ModeEphemeral},
		&zkstore.OpSet{Path: path, Data: info.encode(), Version: 0},
	)
	if err == nil {
		_, st, err := zk.Get(res[0].Path)
		if err != nil {
			return 0, fmt.Errorf("reading back %s: %w", path, err)
		}
		return st.Czxid, nil
	}
	if !errors.Is(err, zkstore.ErrNodeExists) {
		return 0, fmt.Errorf("registering %s: %w", path, err)
	}
	_, st, gerr := zk.Get(path)
	if gerr == nil && st.EphemeralOwner == zk.Session().ID {
		return st.Czxid, nil
	}
	if gerr != nil && !errors.Is(gerr, zkstore.ErrNoNode) {
		return 0, fmt.Errorf("reading %s: %w", path, gerr)
	}
	var owner int64
	if gerr == nil {
		owner = st.EphemeralOwner
	}
	return 0, &BrokerRegisteredError{ID: id, Owner: owner}
}
