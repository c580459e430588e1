package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/zkstore"
)

// A broker without zookeeper.connect is a cluster of one: its metadata
// lives in a zkstore.LocalStore in the first log dir, and everything
// else — registration, the controller, LeaderAndIsr and UpdateMetadata,
// every handler — is the cluster path.

// Files a standalone broker kept before the local store, read once to seed
// it and then renamed out of the way.
const (
	legacyTopicsFile          = "kbroker-topics.json"
	legacyProducerIDBlockFile = "producer-id-block"
	legacySuffix              = ".migrated"
)

// legacyTopic is one entry of legacyTopicsFile.
type legacyTopic struct {
	Name       string            `json:"name"`
	ID         [16]byte          `json:"id"`
	Partitions int32             `json:"partitions"`
	Configs    map[string]string `json:"configs,omitempty"`
}

// openLocalStore opens the store; a fresh one is seeded with the log
// dirs' cluster id and whatever an earlier standalone broker kept in its
// own files, so that an upgraded broker keeps its topics, topic ids,
// configs, leader epochs and producer ids.
func (b *Broker) openLocalStore() (*zkstore.LocalStore, error) {
	dir := b.cfg.LogDirs[0]
	store, err := zkstore.OpenLocalStore(dir, b.logger.With("component", "metadata-store"))
	if err != nil {
		return nil, fmt.Errorf("metadata store: %w", err)
	}
	if !store.Fresh() {
		return store, nil
	}
	st, legacy, err := b.readLegacyStandaloneState(dir)
	if err != nil {
		store.Close()
		return nil, err
	}
	if err := kafkazk.Seed(store, st); err != nil {
		store.Close()
		return nil, fmt.Errorf("metadata store: %w", err)
	}
	for _, f := range legacy {
		if err := os.Rename(f, f+legacySuffix); err != nil {
			b.logger.Warn("cannot rename a file the metadata store replaced", "path", f, "err", err)
		}
	}
	if len(st.Topics) > 0 {
		b.logger.Info("moved the topic table into the metadata store", "topics", len(st.Topics), "path", filepath.Join(dir, legacyTopicsFile))
	}
	return store, nil
}

// readLegacyStandaloneState reads the earlier standalone files, returning
// the paths it read.
func (b *Broker) readLegacyStandaloneState(dir string) (kafkazk.StandaloneState, []string, error) {
	st := kafkazk.StandaloneState{BrokerID: b.cfg.BrokerID, ClusterID: b.logs.ClusterID()}
	var read []string
	path := filepath.Join(dir, legacyTopicsFile)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		var topics []legacyTopic
		if err := json.Unmarshal(data, &topics); err != nil {
			return st, nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, t := range topics {
			epochs := make([]int32, t.Partitions)
			for p := range epochs {
				if l, ok := b.logs.Get(t.Name, int32(p)); ok {
					if es := l.LeaderEpochEntries(); len(es) > 0 {
						epochs[p] = es[len(es)-1].Epoch
					}
				}
			}
			st.Topics = append(st.Topics, kafkazk.StandaloneTopic{Name: t.Name, ID: t.ID, Partitions: t.Partitions, Configs: t.Configs, LeaderEpochs: epochs})
		}
		read = append(read, path)
	case !errors.Is(err, os.ErrNotExist):
		return st, nil, err
	}
	path = filepath.Join(dir, legacyProducerIDBlockFile)
	data, err = os.ReadFile(path)
	switch {
	case err == nil:
		next, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || next < 0 {
			return st, nil, fmt.Errorf("%s: corrupt producer id block %q", path, data)
		}
		st.NextProducerID = next
		read = append(read, path)
	case !errors.Is(err, os.ErrNotExist):
		return st, nil, err
	}
	return st, read, nil
}

// closeStores closes the logs and the local metadata store.
func (b *Broker) closeStores() error {
	err := b.logs.Close()
	if b.store != nil {
		err = errors.Join(err, b.store.Close())
	}
	return err
}

// ownMetadataTimeout bounds how long a standalone broker waits for its own
// controller before serving anyway (and logging why).
const ownMetadataTimeout = 30 * time.Second

// awaitOwnMetadata waits until the controller this broker runs has sent it
// the cluster's state (itself among the live brokers, every partition's
// leader), or the node failed, or stop.
func (b *Broker) awaitOwnMetadata(stop context.Context, nodeFailed <-chan struct{}) {
	deadline := time.NewTimer(ownMetadataTimeout)
	defer deadline.Stop()
	for {
		if b.ownMetadataArrived() {
			return
		}
		select {
		case <-stop.Done():
			return
		case <-nodeFailed:
			return
		case <-deadline.C:
			b.logger.Warn("the controller has not sent this broker its metadata yet; serving anyway", "waited", ownMetadataTimeout)
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (b *Broker) ownMetadataArrived() bool {
	if b.cluster.controller() < 0 {
		return false
	}
	found := false
	for _, lb := range b.cluster.liveBrokers() {
		found = found || lb.ID == b.cfg.BrokerID
	}
	if !found {
		return false
	}
	for _, t := range b.sortedTopics() {
		for i, s := range t.States {
			if s.Leader < 0 || t.Partitions[i] == nil || !t.Partitions[i].IsLeader() {
				return false
			}
		}
	}
	return true
}

// selfRequest is how the controller on this broker reaches the broker
// itself: the request goes through the same encoding and handler as one
// from the network, without depending on the advertised address being
// reachable from here.
func (b *Broker) selfRequest(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	body := req.AppendTo(nil)
	decoded := kmsg.RequestForKey(req.Key())
	decoded.SetVersion(req.GetVersion())
	if err := decoded.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("controller request %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	resp := b.Handle(ctx, &protocol.Request{
		Key: req.Key(), Version: req.GetVersion(), Body: decoded,
		Conn: &protocol.ConnInfo{Listener: b.cfg.InterBrokerListenerName, Internal: true},
	})
	if resp.Wait != nil {
		resp = resp.Wait(ctx)
	}
	if resp.Msg == nil {
		return nil, fmt.Errorf("controller request %s: no response", kmsg.NameForKey(req.Key()))
	}
	return resp.Msg, nil
}
