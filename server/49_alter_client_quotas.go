package server

// AlterClientQuotas, versions 0-1.
//
// Sets and removes client quotas of users, client ids, user/client-id
// pairs and IPs (and their defaults) as ZooKeeper-mode Kafka's
// ZkAdminManager.alterClientQuotas does: each entry is validated and
// written on its own into the entity's znode (/config/users/<u>,
// /config/users/<u>/clients/<c>, /config/clients/<c>, /config/ips/<ip>),
// keeping whatever else the znode holds (a user's SCRAM credentials),
// then announced in /config/changes, which every broker watches to put the
// quotas in force. Any broker serves it, as in ZooKeeper mode. Needs
// ALTER_CONFIGS on the cluster.
//
// Deliberate difference: a quota of zero or below is refused with the
// message Kafka's KRaft controller gives ("Quota <key> must be greater
// than 0"); ZooKeeper-mode Kafka stores it (docs/beyond-kafka.md).

import (
	"context"
	"errors"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.AlterClientQuotas.Int16(), 0, 1, handleAlterClientQuotas) }

// quotaKeyType is a quota config's type in Kafka's ConfigDefs
// (QuotaConfigs): byte rates and connection rates are integral.
type quotaKeyType int

const (
	quotaLong quotaKeyType = iota
	quotaInt
	quotaDouble
	quotaString // SCRAM credentials, which share the user's znode
)

var (
	clientQuotaKeys = map[string]quotaKeyType{
		"producer_byte_rate": quotaLong, "consumer_byte_rate": quotaLong,
		"request_percentage": quotaDouble, "controller_mutation_rate": quotaDouble,
	}
	userQuotaKeys = map[string]quotaKeyType{
		"producer_byte_rate": quotaLong, "consumer_byte_rate": quotaLong,
		"request_percentage": quotaDouble, "controller_mutation_rate": quotaDouble,
		"SCRAM-SHA-256": quotaString, "SCRAM-SHA-512": quotaString,
	}
	ipQuotaKeys = map[string]quotaKeyType{"connection_creation_rate": quotaInt}
)

// quotaError is an entry's failure: Kafka's error code and message (nil
// for UNKNOWN_SERVER_ERROR, whose message Kafka never sends).
type quotaError struct {
	code int16
	msg  *string
}

func (e *quotaError) Error() string { return stringOr(e.msg) }

func invalidQuota(msg string) error {
	return &quotaError{code: kerr.InvalidRequest.Code, msg: &msg}
}

func handleAlterClientQuotas(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AlterClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	authorized := b.authorizeCluster(req, kmsg.ACLOperationAlterConfigs)
	for _, e := range r.Entries {
		out := kmsg.NewAlterClientQuotasResponseEntry()
		for _, ent := range e.Entity {
			oe := kmsg.NewAlterClientQuotasResponseEntryEntity()
			oe.Type, oe.Name = ent.Type, ent.Name
			out.Entity = append(out.Entity, oe)
		}
		var err error
		if !authorized {
			err = &quotaError{code: kerr.ClusterAuthorizationFailed.Code, msg: nullableString(clusterAuthorizationFailedMessage)}
		} else {
			err = b.alterClientQuota(e, r.ValidateOnly)
		}
		if err != nil {
			var qe *quotaError
			if !errors.As(err, &qe) {
				b.logger.Warn("altering client quotas failed", "err", err)
				qe = &quotaError{code: kerr.UnknownServerError.Code}
			}
			out.ErrorCode, out.ErrorMessage = qe.code, qe.msg
		}
		resp.Entries = append(resp.Entries, out)
	}
	return protocol.Response{Msg: resp}
}

// quotaTarget is where an entity's quotas live: the znode below /config
// and the keys it may hold.
type quotaTarget struct {
	root, name string
	keys       map[string]quotaKeyType
}

// quotaTargetOf is parseAndSanitizeQuotaEntity and the entity combinations
// of ZkAdminManager.alterClientQuotas.
func quotaTargetOf(entity []kmsg.AlterClientQuotasRequestEntryEntity) (quotaTarget, error) {
	if len(entity) == 0 {
		return quotaTarget{}, invalidQuota("Invalid empty client quota entity")
	}
	var user, client, ip *string
	for _, e := range entity {
		name := kafkazk.QuotaDefaultName
		if e.Name != nil {
			name = kafkazk.Sanitize(*e.Name)
		}
		switch e.Type {
		case "user":
			user = &name
		case "client-id":
			client = &name
		case "ip":
			ip = &name
		default:
			return quotaTarget{}, invalidQuota("Unhandled client quota entity type: " + e.Type)
		}
		if e.Name != nil && *e.Name == "" {
			return quotaTarget{}, invalidQuota("Empty " + e.Type + " not supported")
		}
	}
	switch {
	case ip != nil && (user != nil || client != nil):
		return quotaTarget{}, invalidQuota("Invalid quota entity combination, IP entity should not be used with user/client ID entity.")
	case ip != nil:
		if !validIPEntity(*ip) {
			return quotaTarget{}, invalidQuota(*ip + " is not a valid IP or resolvable host.")
		}
		return quotaTarget{kafkazk.ConfigTypeIP, *ip, ipQuotaKeys}, nil
	case user != nil && client != nil:
		return quotaTarget{kafkazk.ConfigTypeUser, *user + "/" + kafkazk.ConfigTypeClient + "/" + *client, userQuotaKeys}, nil
	case user != nil:
		return quotaTarget{kafkazk.ConfigTypeUser, *user, userQuotaKeys}, nil
	case client != nil:
		return quotaTarget{kafkazk.ConfigTypeClient, *client, clientQuotaKeys}, nil
	}
	return quotaTarget{}, invalidQuota("Invalid client quota entity")
}

// validIPEntity is DynamicConfig.Ip.isValidIpEntity: an address, a host
// name that resolves, or the default.
func validIPEntity(ip string) bool {
	if ip == kafkazk.QuotaDefaultName || net.ParseIP(ip) != nil {
		return true
	}
	addrs, err := net.LookupHost(ip)
	return err == nil && len(addrs) > 0
}

// quotaValue checks an op's value for its key and gives its stored text.
func quotaValue(keys map[string]quotaKeyType, key string, value float64) (string, error) {
	typ, ok := keys[key]
	if !ok {
		return "", invalidQuota("Invalid configuration key " + key)
	}
	if typ == quotaString {
		// Kafka's ConfigDef has these as STRING: IllegalStateException.
		return "", &quotaError{code: kerr.UnknownServerError.Code}
	}
	if !(value > 0) {
		return "", invalidQuota("Quota " + key + " must be greater than 0")
	}
	if typ == quotaDouble {
		return javaDouble(value), nil
	}
	const epsilon = 1e-6
	limit, name := float64(math.MaxInt64), "LONG"
	if typ == quotaInt {
		limit, name = math.MaxInt32, "INT"
	}
	// Java's (value + epsilon).toLong saturates at the type's limit.
	n := math.Min(math.Floor(value+epsilon), limit)
	if math.Abs(n-value) > epsilon {
		return "", invalidQuota("Configuration " + key + " must be a " + name + " value")
	}
	return strconv.FormatInt(int64(n), 10), nil
}

// javaDouble formats v as Java's Double.toString does, the text Kafka
// stores for a DOUBLE quota ("50.0", "1.0E7").
func javaDouble(v float64) string {
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// alterClientQuota validates one entry and, unless validateOnly, writes it.
func (b *Broker) alterClientQuota(e kmsg.AlterClientQuotasRequestEntry, validateOnly bool) error {
	target, err := quotaTargetOf(e.Entity)
	if err != nil {
		return err
	}
	apply := func(configs map[string]string) error {
		for _, op := range e.Ops {
			if op.Remove {
				delete(configs, op.Key)
				continue
			}
			v, err := quotaValue(target.keys, op.Key, op.Value)
			if err != nil {
				return err
			}
			configs[op.Key] = v
		}
		return nil
	}
	if validateOnly {
		return apply(map[string]string{})
	}
	if b.security == nil {
		return errors.New("metadata store not ready")
	}
	var written map[string]string
	err = b.security.AlterEntityConfig(target.root, target.name, func(configs map[string]string) error {
		if err := apply(configs); err != nil {
			return err
		}
		written = configs
		return nil
	})
	if err != nil {
		return err
	}
	// The notification puts it in force on every broker; this one need
	// not wait for its own watch.
	b.quotaEntityChanged(target.root, target.name, written)
	return nil
}
