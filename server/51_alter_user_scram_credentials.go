package server

// AlterUserScramCredentials, version 0.
//
// What `kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=...]'
// --entity-type users` sends: the client salts the password, the broker
// derives the stored and server keys and writes /config/users/<user>.
// Validation and error texts follow Kafka's ZkAdminManager: per user,
// an empty name or a bad iteration count is UNACCEPTABLE_CREDENTIAL, an
// unknown mechanism UNSUPPORTED_SASL_MECHANISM, the same (user,
// mechanism) twice DUPLICATE_RESOURCE, deleting a credential that does
// not exist RESOURCE_NOT_FOUND. Needs ALTER on the cluster. Unlike Kafka's
// ZooKeeper-mode brokers, any broker serves it, not only the controller
// (docs/beyond-kafka.md): the write is one conditional znode update.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/sasl"
)

func init() {
	register(kmsg.AlterUserSCRAMCredentials.Int16(), 0, 0, handleAlterUserSCRAMCredentials)
}

func handleAlterUserSCRAMCredentials(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	resp.Results = []kmsg.AlterUserSCRAMCredentialsResponseResult{}
	fail := func(user string, e *kerr.Error, msg string) {
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode, res.ErrorMessage = user, e.Code, nullableString(msg)
		resp.Results = append(resp.Results, res)
	}
	if !b.authorizeCluster(req, kmsg.ACLOperationAlter) {
		users := map[string]bool{}
		for _, u := range r.Upsertions {
			users[u.Name] = true
		}
		for _, d := range r.Deletions {
			users[d.Name] = true
		}
		// Every user, sorted, without a message (Kafka's getErrorResponse
		// through ApiError.fromThrowable, which drops an error's own text).
		for _, u := range sortedKeysOf(users) {
			res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			res.User, res.ErrorCode = u, kerr.ClusterAuthorizationFailed.Code
			resp.Results = append(resp.Results, res)
		}
		return protocol.Response{Msg: resp}
	}

	// Users whose request is illegal in itself.
	illegal := map[string]string{}
	for _, d := range r.Deletions {
		if d.Name == "" {
			illegal[d.Name] = "Username must not be empty"
		} else if _, ok := sasl.MechanismName(d.Mechanism); !ok {
			illegal[d.Name] = "Unknown SCRAM mechanism"
		}
	}
	for _, u := range r.Upsertions {
		_, ok := sasl.MechanismName(u.Mechanism)
		switch {
		case u.Name == "":
			illegal[u.Name] = "Username must not be empty"
		case !ok:
			illegal[u.Name] = "Unknown SCRAM mechanism"
		case u.Iterations > sasl.MaxIterations:
			illegal[u.Name] = "Too many iterations"
		case u.Iterations < sasl.MinIterations:
			illegal[u.Name] = "Too few iterations"
		}
	}
	for _, u := range sortedKeysOf(illegal) {
		e := kerr.UnacceptableCredential
		if illegal[u] == "Unknown SCRAM mechanism" {
			e = kerr.UnsupportedSaslMechanism
		}
		fail(u, e, illegal[u])
	}

	type userMech struct {
		user string
		mech int8
	}
	pairs := map[userMech]int{}
	for _, u := range r.Upsertions {
		if _, bad := illegal[u.Name]; !bad {
			pairs[userMech{u.Name, u.Mechanism}]++
		}
	}
	for _, d := range r.Deletions {
		if _, bad := illegal[d.Name]; !bad {
			pairs[userMech{d.Name, d.Mechanism}]++
		}
	}
	duplicate := map[string]bool{}
	candidates := map[string]bool{}
	for p, n := range pairs {
		candidates[p.user] = true
		if n > 1 {
			duplicate[p.user] = true
		}
	}
	for _, u := range sortedKeysOf(duplicate) {
		fail(u, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
	}

	for _, user := range sortedKeysOf(candidates) {
		if duplicate[user] {
			continue
		}
		if e, msg := b.alterUserCredentials(user, r); e != nil {
			fail(user, e, msg)
			continue
		}
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User = user
		resp.Results = append(resp.Results, res)
	}
	return protocol.Response{Msg: resp}
}

// alterUserCredentials applies r's deletions and upsertions for user in
// one conditional write.
func (b *Broker) alterUserCredentials(user string, r *kmsg.AlterUserSCRAMCredentialsRequest) (*kerr.Error, string) {
	var failed *kerr.Error
	var failedMsg string
	err := b.security.AlterUserConfig(user, func(configs map[string]string) error {
		failed = nil
		for _, d := range r.Deletions {
			if d.Name != user {
				continue
			}
			mech, _ := sasl.MechanismName(d.Mechanism)
			if _, ok := configs[mech]; !ok {
				failed, failedMsg = kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist"
				return failed
			}
			delete(configs, mech)
		}
		for _, u := range r.Upsertions {
			if u.Name != user {
				continue
			}
			mech, _ := sasl.MechanismName(u.Mechanism)
			cred, err := sasl.ScramCredentialFromSaltedPassword(mech, u.SaltedPassword, u.Salt, int(u.Iterations))
			if err != nil {
				failed, failedMsg = kerr.UnacceptableCredential, err.Error()
				return failed
			}
			configs[mech] = cred.String()
		}
		return nil
	})
	if failed != nil {
		return failed, failedMsg
	}
	if err != nil {
		b.logger.Warn("altering SCRAM credentials failed", "user", user, "err", err)
		return kerr.UnknownServerError, err.Error()
	}
	b.logger.Info("SCRAM credentials altered", "user", user)
	return nil, ""
}
