package kafkazk

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kbroker/kbroker/zkstore"
)

// Root entity types of client quota znodes below /config.
const (
	ConfigTypeClient = configTypeClient
	ConfigTypeIP     = configTypeIP
	// QuotaDefaultName is a default entity's znode name.
	QuotaDefaultName = quotaDefaultName
)

// EntityConfig reads /config/<root>/<name> (name sanitized, and for a
// user's client id "<user>/clients/<client>"); version is -1 when it does
// not exist.
func EntityConfig(zk zkstore.Client, root, name string) (map[string]string, int32, error) {
	data, stat, err := zk.Get(ConfigEntityPath(root, name))
	if errors.Is(err, zkstore.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	configs, err := DecodeConfigZNode(data)
	return configs, stat.Version, err
}

// errConcurrentChange is an entity config changed between its read and
// its write; AlterEntityConfig retries.
var errConcurrentChange = errors.New("entity config changed concurrently")

// AlterEntityConfig applies change to the config of a user, client id,
// user/client-id or IP entity and writes it back if it still is the
// version read (nothing is written when change fails), then announces it
// in /config/changes as Kafka's AdminZkClient.changeEntityConfig does. A
// quota entity left without configs or children is deleted
// (tryCleanQuotaNodes), with its user's empty parents for a user/client-id
// entity. Concurrent writers are retried a bounded number of times.
func AlterEntityConfig(zk zkstore.Client, root, name string, change func(map[string]string) error) error {
	for attempt := 0; attempt < 10; attempt++ {
		err := alterEntityConfigOnce(zk, root, name, change)
		if !errors.Is(err, errConcurrentChange) {
			return err
		}
	}
	return fmt.Errorf("%s/%s: %w ten times in a row", root, name, errConcurrentChange)
}

func alterEntityConfigOnce(zk zkstore.Client, root, name string, change func(map[string]string) error) error {
	configs, version, err := EntityConfig(zk, root, name)
	if err != nil {
		return err
	}
	if err := change(configs); err != nil {
		return err
	}
	path := ConfigEntityPath(root, name)
	written := false
	if len(configs) == 0 && version >= 0 {
		written, err = cleanQuotaNode(zk, root, name, version)
		if err != nil {
			return err
		}
	}
	if !written {
		data := encodeConfigZNode(configs)
		if version < 0 {
			if err := CreateRecursive(zk, parentPath(path)); err != nil {
				return err
			}
			_, err = zk.Create(path, data, zkstore.ModePersistent)
			if errors.Is(err, zkstore.ErrNodeExists) {
				return errConcurrentChange
			}
		} else {
			_, err = zk.Set(path, data, version)
			if errors.Is(err, zkstore.ErrBadVersion) || errors.Is(err, zkstore.ErrNoNode) {
				return errConcurrentChange
			}
		}
		if err != nil {
			return err
		}
	}
	return announceConfigChange(zk, root+"/"+name)
}

// cleanQuotaNode deletes an emptied entity znode that has no children, and
// for <user>/clients/<client> the clients node and the user's node when
// nothing else is left in them (AdminZkClient.tryCleanQuotaNodes). false
// means the node stays (it has children) and is written empty.
func cleanQuotaNode(zk zkstore.Client, root, name string, version int32) (bool, error) {
	path := ConfigEntityPath(root, name)
	children, _, err := zk.Children(path)
	if errors.Is(err, zkstore.ErrNoNode) {
		return false, errConcurrentChange
	}
	if err != nil || len(children) > 0 {
		return false, err
	}
	if err := zk.Delete(path, version); err != nil {
		if errors.Is(err, zkstore.ErrBadVersion) || errors.Is(err, zkstore.ErrNoNode) || errors.Is(err, zkstore.ErrNotEmpty) {
			return false, errConcurrentChange
		}
		return false, err
	}
	user, _, isUserClient := strings.Cut(name, "/"+configTypeClient+"/")
	if root != ConfigTypeUser || !isUserClient {
		return true, nil
	}
	// Parents that are empty now go too; one changed meanwhile stays.
	clients := ConfigEntityPath(ConfigTypeUser, user+"/"+configTypeClient)
	if rest, _, err := zk.Children(clients); err != nil || len(rest) > 0 {
		return true, nil
	}
	if err := zk.Delete(clients, -1); err != nil {
		return true, nil
	}
	userConfigs, userVersion, err := EntityConfig(zk, ConfigTypeUser, user)
	if err != nil || userVersion < 0 || len(userConfigs) > 0 {
		return true, nil
	}
	if rest, _, err := zk.Children(ConfigEntityPath(ConfigTypeUser, user)); err == nil && len(rest) == 0 {
		_ = zk.Delete(ConfigEntityPath(ConfigTypeUser, user), userVersion)
	}
	return true, nil
}

func parentPath(p string) string { return p[:strings.LastIndex(p, "/")] }

// QuotaEntityOf reads a config change notification's entity path as a
// quota entity: "clients/<c>", "users/<u>", "users/<u>/clients/<c>" or
// "ips/<ip>", names sanitized (<default> for a default). ok is false for
// other entity types.
func QuotaEntityOf(entityPath string) (root, name string, ok bool) {
	root, name, found := strings.Cut(entityPath, "/")
	if !found || name == "" {
		return "", "", false
	}
	switch root {
	case ConfigTypeUser, configTypeClient, configTypeIP:
		return root, name, true
	}
	return "", "", false
}
