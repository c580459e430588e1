package kafkazk

import (
	"errors"
	"strconv"

	"github.com/kbroker/kbroker/zkstore"
)

// quotaDefaultName is the name a default entity has in ZooKeeper
// (ZooKeeperInternals.DEFAULT_STRING).
const quotaDefaultName = "<default>"

// QuotaKeys are the client quota configs Kafka stores with users, client
// ids and IPs (QuotaConfig); the other keys of a user's znode are SCRAM
// credentials.
var QuotaKeys = map[string]bool{
	"producer_byte_rate": true, "consumer_byte_rate": true, "request_percentage": true,
	"controller_mutation_rate": true, "connection_creation_rate": true,
}

// QuotaEntity is one entity with quota configs: Names maps the entity
// types it has ("user", "client-id", "ip") to a name, nil for the
// default entity of that type.
type QuotaEntity struct {
	Names  map[string]*string
	Quotas map[string]float64
}

// QuotaEntities reads every quota entity Kafka's AdminZkClient can write:
// /config/users/<u>, /config/clients/<c>, /config/users/<u>/clients/<c>
// and /config/ips/<ip>. Entities without quota configs are left out.
func QuotaEntities(zk zkstore.Client) ([]QuotaEntity, error) {
	var out []QuotaEntity
	add := func(path string, names map[string]*string) error {
		data, _, err := zk.Get(path)
		if errors.Is(err, zkstore.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		configs, err := DecodeConfigZNode(data)
		if err != nil {
			return nil // not Kafka's: nothing Kafka would report either
		}
		quotas := map[string]float64{}
		for k, v := range configs {
			if !QuotaKeys[k] {
				continue
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				quotas[k] = f
			}
		}
		if len(quotas) > 0 {
			out = append(out, QuotaEntity{Names: names, Quotas: quotas})
		}
		return nil
	}
	entityName := func(sanitized string) *string {
		if sanitized == quotaDefaultName {
			return nil
		}
		n, err := Desanitize(sanitized)
		if err != nil {
			n = sanitized
		}
		return &n
	}
	for _, e := range []struct{ dir, typ string }{{ConfigTypeUser, "user"}, {configTypeClient, "client-id"}, {configTypeIP, "ip"}} {
		dir := configPath + "/" + e.dir
		names, _, err := zk.Children(dir)
		if errors.Is(err, zkstore.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if err := add(dir+"/"+n, map[string]*string{e.typ: entityName(n)}); err != nil {
				return nil, err
			}
			if e.dir != ConfigTypeUser {
				continue
			}
			clients, _, err := zk.Children(dir + "/" + n + "/" + configTypeClient)
			if errors.Is(err, zkstore.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, err
			}
			for _, c := range clients {
				names := map[string]*string{"user": entityName(n), "client-id": entityName(c)}
				if err := add(dir+"/"+n+"/"+configTypeClient+"/"+c, names); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}
