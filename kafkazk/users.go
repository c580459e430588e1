package kafkazk

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/kbroker/kbroker/zkstore"
)

// Sanitize turns a user (or client id) into the znode name Kafka stores
// its config under (org.apache.kafka.common.utils.Sanitizer): Java's
// URLEncoder in UTF-8, with '*' and ' ' written %2A and %20 so that the
// name is also safe as a JMX value.
func Sanitize(name string) string {
	var b strings.Builder
	for _, c := range []byte(name) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Desanitize reverses Sanitize (Sanitizer.desanitize: URLDecoder).
func Desanitize(name string) (string, error) {
	return url.QueryUnescape(name)
}

// UserConfig reads /config/users/<sanitized user>: the user's SCRAM
// credentials (by mechanism name) and quotas. A user without the znode
// has none; version is -1 then.
func UserConfig(zk zkstore.Client, user string) (configs map[string]string, version int32, err error) {
	data, stat, err := zk.Get(ConfigEntityPath(ConfigTypeUser, Sanitize(user)))
	if errors.Is(err, zkstore.ErrNoNode) {
		return map[string]string{}, -1, nil
	}
	if err != nil {
		return nil, 0, err
	}
	configs, err = DecodeConfigZNode(data)
	return configs, stat.Version, err
}

// Users lists the users that have a config znode.
func Users(zk zkstore.Client) ([]string, error) {
	names, _, err := zk.Children(configPath + "/" + ConfigTypeUser)
	if errors.Is(err, zkstore.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if u, err := Desanitize(n); err == nil {
			out = append(out, u)
		}
	}
	return out, nil
}

// errConcurrentUserChange is a user config changed between its read and
// its write; AlterUserConfig retries.
var errConcurrentUserChange = errors.New("user config changed concurrently")

// AlterUserConfig applies change to the user's config and writes it back
// if it still is the version read (nothing is written when change fails), then announces it in /config/changes
// (Kafka's AdminZkClient.changeUserOrUserClientIdConfig), so that every
// broker drops its cached credentials. Concurrent writers are retried a
// bounded number of times.
func AlterUserConfig(zk zkstore.Client, user string, change func(map[string]string) error) error {
	for attempt := 0; attempt < 10; attempt++ {
		err := alterUserConfigOnce(zk, user, change)
		if !errors.Is(err, errConcurrentUserChange) {
			return err
		}
	}
	return fmt.Errorf("user %s: %w ten times in a row", user, errConcurrentUserChange)
}

func alterUserConfigOnce(zk zkstore.Client, user string, change func(map[string]string) error) error {
	configs, version, err := UserConfig(zk, user)
	if err != nil {
		return err
	}
	if err := change(configs); err != nil {
		return err
	}
	path := ConfigEntityPath(ConfigTypeUser, Sanitize(user))
	data := encodeConfigZNode(configs)
	if version < 0 {
		if err := CreateRecursive(zk, configPath+"/"+ConfigTypeUser); err != nil {
			return err
		}
		_, err = zk.Create(path, data, zkstore.ModePersistent)
		if errors.Is(err, zkstore.ErrNodeExists) {
			return errConcurrentUserChange
		}
	} else {
		_, err = zk.Set(path, data, version)
		if errors.Is(err, zkstore.ErrBadVersion) || errors.Is(err, zkstore.ErrNoNode) {
			return errConcurrentUserChange
		}
	}
	if err != nil {
		return err
	}
	return announceConfigChange(zk, ConfigTypeUser+"/"+Sanitize(user))
}
