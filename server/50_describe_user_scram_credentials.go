package server

// DescribeUserScramCredentials, version 0.
//
// Reads /config/users/<user> as Kafka's ZkAdminManager does, with its
// error texts: a named user without credentials is RESOURCE_NOT_FOUND, a
// user named twice DUPLICATE_RESOURCE; all users when none is named.
// Needs DESCRIBE on the cluster.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
	"github.com/kbroker/kbroker/security/sasl"
)

func init() {
	register(kmsg.DescribeUserSCRAMCredentials.Int16(), 0, 0, handleDescribeUserSCRAMCredentials)
}

func handleDescribeUserSCRAMCredentials(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	resp.Results = []kmsg.DescribeUserSCRAMCredentialsResponseResult{}
	if !b.authorizeCluster(req, kmsg.ACLOperationDescribe) {
		// Kafka's DescribeUserScramCredentialsRequest.getErrorResponse:
		// one result per user asked for, without the name, and no
		// message (ApiError.fromThrowable drops an error's own text).
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		for range r.Users {
			res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			res.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			resp.Results = append(resp.Results, res)
		}
		return protocol.Response{Msg: resp}
	}
	if len(r.Users) == 0 {
		users, err := b.security.Users()
		if err != nil {
			resp.ErrorCode = errCode(err)
			resp.ErrorMessage = nullableString(err.Error())
			return protocol.Response{Msg: resp}
		}
		sort.Strings(users)
		for _, u := range users {
			if res, ok := b.describeUserCredentials(u, false); ok {
				resp.Results = append(resp.Results, res)
			}
		}
		return protocol.Response{Msg: resp}
	}
	count := map[string]int{}
	for _, u := range r.Users {
		count[u.Name]++
	}
	done := map[string]bool{}
	for _, u := range r.Users {
		if done[u.Name] {
			continue
		}
		done[u.Name] = true
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = u.Name
		switch {
		case u.Name == "":
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = nullableString("Username must not be empty")
		case count[u.Name] > 1:
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = nullableString("Cannot describe SCRAM credentials for the same user twice in a single request: " + u.Name)
		default:
			res, _ = b.describeUserCredentials(u.Name, true)
		}
		resp.Results = append(resp.Results, res)
	}
	return protocol.Response{Msg: resp}
}

// describeUserCredentials lists a user's mechanisms and iterations; ok is
// false for a user without credentials unless explicit (then the result
// says RESOURCE_NOT_FOUND).
func (b *Broker) describeUserCredentials(user string, explicit bool) (kmsg.DescribeUserSCRAMCredentialsResponseResult, bool) {
	res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
	res.User = user
	configs, err := b.security.UserConfig(user)
	if err != nil {
		res.ErrorCode = errCode(err)
		res.ErrorMessage = nullableString(err.Error())
		return res, true
	}
	for _, mech := range []string{sasl.ScramSHA256, sasl.ScramSHA512} {
		text, ok := configs[mech]
		if !ok {
			continue
		}
		cred, err := sasl.ParseScramCredential(text)
		if err != nil {
			res.ErrorCode = kerr.UnknownServerError.Code
			res.ErrorMessage = nullableString("Error processing describe user SCRAM credential configs request")
			res.CredentialInfos = nil
			return res, true
		}
		typ, _ := sasl.MechanismType(mech)
		info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
		info.Mechanism, info.Iterations = typ, int32(cred.Iterations)
		res.CredentialInfos = append(res.CredentialInfos, info)
	}
	if len(res.CredentialInfos) == 0 {
		if !explicit {
			return res, false
		}
		res.ErrorCode = kerr.ResourceNotFound.Code
		res.ErrorMessage = nullableString("Attempt to describe a user credential that does not exist: " + user)
	}
	return res, true
}
