package server

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAuthorizeAddPartitionsToTxnInternalTopic: a client may not add an
// internal topic to its transaction, whatever its ACLs, super users
// included (Kafka leaves internal topics out of the topics it authorizes);
// the other partitions are not attempted.
func TestAuthorizeAddPartitionsToTxnInternalTopic(t *testing.T) {
	e := startAuthzBroker(t)
	e.awaitCoordinators(t)
	e.createTopic(t, "orders", 1)
	const alice = "User:alice"
	e.grant(t, alice, txnACL(kmsg.ACLOperationAll, "*"), topicACL(kmsg.ACLOperationAll, "*"), clusterACL(kmsg.ACLOperationAll))
	for _, principal := range []string{alice, authzSuper} {
		p := e.initProducer(t, "internal-"+principal)
		req := addPartitionsRequest(p, "orders")
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = offsetsTopic, []int32{0}
		req.Topics = append(req.Topics, rt)
		resp := e.send(t, principal, authzHost, req).(*kmsg.AddPartitionsToTxnResponse)
		want := map[string]int16{"orders": kerr.OperationNotAttempted.Code, offsetsTopic: topicDenied}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				wantCode(t, principal+" "+rt.Topic, rp.ErrorCode, want[rt.Topic])
			}
			delete(want, rt.Topic)
		}
		if len(want) != 0 {
			t.Errorf("%s: no answer for %v", principal, want)
		}
		if s := e.txnState(t, p.txnID).State; s != "Empty" {
			t.Errorf("%s: transaction %s", principal, s)
		}
	}
}

// TestAuthorizationComesAfterRequestChecks: what Kafka's KafkaApis refuses
// before it authorizes anything, a principal without ACLs is refused the
// same way, learning nothing it could not learn anyway.
func TestAuthorizationComesAfterRequestChecks(t *testing.T) {
	e := startAuthzBroker(t)
	const nobody = "User:nobody"
	cases := []struct {
		name    string
		req     func() kmsg.Request
		version int16
		code    func(kmsg.Response) int16
		want    int16
	}{
		{
			name: "SyncGroup v5 without protocol", version: 5,
			req: func() kmsg.Request {
				req := kmsg.NewPtrSyncGroupRequest()
				req.Group, req.Generation, req.MemberID = "g", 1, "m"
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.SyncGroupResponse).ErrorCode },
			want: kerr.InconsistentGroupProtocol.Code,
		},
		{
			name: "AlterConfigs of another broker", version: 2,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterConfigsRequest()
				req.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "7"}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "IncrementalAlterConfigs of a static broker config", version: 1,
			req: func() kmsg.Request {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "0",
					Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "log.dirs", Op: kmsg.IncrementalAlterConfigOpSet, Value: strp("/x")}}}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "IncrementalAlterConfigs with a null value", version: 1,
			req: func() kmsg.Request {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t",
					Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet}}}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "AlterConfigs naming a resource twice", version: 2,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterConfigsRequest()
				rr := kmsg.AlterConfigsRequestResource{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"}
				req.Resources = []kmsg.AlterConfigsRequestResource{rr, rr}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[1].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "AlterConfigs naming a config twice", version: 2,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterConfigsRequest()
				c := kmsg.AlterConfigsRequestResourceConfig{Name: "retention.ms", Value: strp("1")}
				req.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t",
					Configs: []kmsg.AlterConfigsRequestResourceConfig{c, c}}}
				return req
			},
			code: func(r kmsg.Response) int16 { return r.(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode },
			want: kerr.InvalidRequest.Code,
		},
		{
			name: "DescribeProducers of an invalid topic name", version: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "no/slashes", Partitions: []int32{0}}}
				return req
			},
			code: func(r kmsg.Response) int16 {
				return r.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
			},
			want: kerr.InvalidTopicException.Code,
		},
	}
	for _, c := range cases {
		req := c.req()
		req.SetVersion(c.version)
		wantCode(t, c.name, c.code(e.send(t, nobody, authzHost, req)), c.want)
	}
}

// TestAuthorizeInternalRequests: the broker's requests to itself (the
// controller on this broker reaching its replica manager) carry its own
// authority, although their connection never authenticated.
func TestAuthorizeInternalRequests(t *testing.T) {
	e := startAuthzBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrDescribeACLsRequest()
	req.SetVersion(3)
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := e.b.selfRequest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "internal DescribeAcls", resp.(*kmsg.DescribeACLsResponse).ErrorCode, 0)
	// The same from an anonymous client is refused.
	wantCode(t, "anonymous DescribeAcls", e.send(t, "User:ANONYMOUS", authzHost, req).(*kmsg.DescribeACLsResponse).ErrorCode, clusterDenied)
}
