package server

// Rows of the authorization matrix: admin, ACL and SCRAM APIs, and the
// APIs Kafka does not authorize.

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// adminCases: topics, records, configs, log dirs, elections and
// reassignments.
func adminCases(f *authzFixture) []authzCase {
	createTopics := func(name string) *kmsg.CreateTopicsRequest {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics, req.TimeoutMillis = []kmsg.CreateTopicsRequestTopic{rt}, 10000
		return req
	}
	checkCreated := func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response, name string, configsVisible bool) {
		t.Helper()
		st := resp.(*kmsg.CreateTopicsResponse).Topics[0]
		if ph.denied {
			wantCode(t, "topic", st.ErrorCode, ph.code)
			if stringOr(st.ErrorMessage) != "Authorization failed." {
				t.Errorf("message %v", st.ErrorMessage)
			}
			// Nor may it see the configs it would have had, unless it may
			// describe them.
			configCode := topicDenied
			if ph.allows(opDescribeConfigs) || ph.allows(opAlterConfigs) {
				configCode = 0
			}
			wantCode(t, "topic configs", st.ConfigErrorCode, configCode)
			if st.NumPartitions != -1 || st.ReplicationFactor != -1 || st.TopicID != ([16]byte{}) || len(st.Configs) != 0 {
				t.Errorf("denied answer: %+v", st)
			}
			if e.b.topic(name) != nil {
				t.Error("created although denied")
			}
			return
		}
		wantCode(t, "topic", st.ErrorCode, 0)
		if configsVisible {
			wantCode(t, "topic configs", st.ConfigErrorCode, 0)
			if st.NumPartitions != 1 || st.ReplicationFactor != 1 || st.TopicID == ([16]byte{}) || len(st.Configs) == 0 {
				t.Errorf("answer without the topic's configs: %+v", st)
			}
		} else {
			// CREATE without DESCRIBE_CONFIGS: Kafka's ZkAdminManager
			// fills in neither the configs nor the partition count,
			// replication factor and id.
			wantCode(t, "topic configs", st.ConfigErrorCode, topicDenied)
			if st.NumPartitions != -1 || st.ReplicationFactor != -1 || st.TopicID != ([16]byte{}) || len(st.Configs) != 0 {
				t.Errorf("answer shows what DESCRIBE_CONFIGS would: %+v", st)
			}
		}
		eventually(t, "created topic", func() string {
			if e.b.topic(name) == nil {
				return "not created"
			}
			return ""
		})
	}
	deleteTopics := func(e *authzEnv, name string, id [16]byte) *kmsg.DeleteTopicsRequest {
		req := kmsg.NewPtrDeleteTopicsRequest()
		rt := kmsg.NewDeleteTopicsRequestTopic()
		if name != "" {
			rt.Topic = strp(name)
		}
		rt.TopicID = id
		req.Topics, req.TimeoutMillis = []kmsg.DeleteTopicsRequestTopic{rt}, 10000
		return req
	}
	checkDeleted := func(t *testing.T, e *authzEnv, ph *authzPhase, st kmsg.DeleteTopicsResponseTopic, name string) {
		t.Helper()
		if ph.denied {
			wantCode(t, "topic", st.ErrorCode, ph.code)
			if st.ErrorMessage != nil {
				t.Errorf("message %q", *st.ErrorMessage)
			}
			if e.b.topic(name) == nil {
				t.Error("deleted although denied")
			}
			return
		}
		wantCode(t, "topic", st.ErrorCode, 0)
		if e.b.topic(name) != nil {
			t.Error("not deleted")
		}
	}
	retention := func(ph *authzPhase) string {
		return fmt.Sprint(3600000 + len(ph.tag)*1000 + int(ph.tag[len(ph.tag)-1]))
	}
	checkAltered := func(t *testing.T, e *authzEnv, ph *authzPhase, code int16, msg *string, typ kmsg.ConfigResourceType) {
		t.Helper()
		if ph.denied {
			wantCode(t, "resource", code, ph.code)
			// Kafka's configsAuthorizationApiError has no message.
			if msg != nil {
				t.Errorf("message %q", *msg)
			}
		} else {
			wantCode(t, "resource", code, 0)
		}
		if typ != kmsg.ConfigResourceTypeTopic {
			return
		}
		got := e.b.topicSetting(e.b.topic("cfg"), "retention.ms")
		if changed := got == retention(ph); changed == ph.denied {
			t.Errorf("retention.ms %s after the request (asked for %s)", got, retention(ph))
		}
	}
	alterConfigs := func(ph *authzPhase, typ kmsg.ConfigResourceType, name string) *kmsg.AlterConfigsRequest {
		req := kmsg.NewPtrAlterConfigsRequest()
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		if typ == kmsg.ConfigResourceTypeTopic {
			rr.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: strp(retention(ph))}}
		}
		req.Resources = []kmsg.AlterConfigsRequestResource{rr}
		return req
	}
	incrementalAlterConfigs := func(ph *authzPhase, typ kmsg.ConfigResourceType, name string) *kmsg.IncrementalAlterConfigsRequest {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		if typ == kmsg.ConfigResourceTypeTopic {
			rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: strp(retention(ph))}}
		}
		req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{rr}
		return req
	}
	describeConfigs := func(typ kmsg.ConfigResourceType, name string) *kmsg.DescribeConfigsRequest {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: typ, ResourceName: name}}
		return req
	}
	checkDescribed := func(t *testing.T, ph *authzPhase, resp kmsg.Response, msg string) {
		t.Helper()
		rr := resp.(*kmsg.DescribeConfigsResponse).Resources[0]
		if ph.denied {
			wantCode(t, "resource", rr.ErrorCode, ph.code)
			if stringOr(rr.ErrorMessage) != msg || len(rr.Configs) != 0 {
				t.Errorf("denied answer: message %v, %d configs", rr.ErrorMessage, len(rr.Configs))
			}
			return
		}
		wantCode(t, "resource", rr.ErrorCode, 0)
		if len(rr.Configs) == 0 {
			t.Error("no configs")
		}
	}
	electLeaders := func(topics ...string) *kmsg.ElectLeadersRequest {
		req := kmsg.NewPtrElectLeadersRequest()
		req.TimeoutMillis = 10000
		if topics == nil {
			req.Topics = nil
		}
		for _, n := range topics {
			req.Topics = append(req.Topics, kmsg.ElectLeadersRequestTopic{Topic: n, Partitions: []int32{0}})
		}
		return req
	}
	clusterDescribe := []aclSpec{clusterACL(opDescribe)}
	clusterAlter := []aclSpec{clusterACL(opAlter)}
	return []authzCase{
		{
			// CREATE on the cluster or on the topic; without
			// DESCRIBE_CONFIGS the answer leaves the topic's configs out.
			name: "CreateTopics", key: 19, version: 7,
			acls:         []aclSpec{topicACL(opCreate, "new-").prefixed()},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{clusterACL(opCreate)}},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opAlter, "new-").prefixed(), topicACL(opDescribeConfigs, "new-").prefixed()}, topicDenied},
				{[]aclSpec{clusterACL(opAlter)}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return createTopics("new-" + ph.tag)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkCreated(t, e, ph, resp, "new-"+ph.tag, ph.super)
			},
		},
		{
			name: "CreateTopics/with DESCRIBE_CONFIGS", key: 19, version: 7,
			acls:  []aclSpec{topicACL(opCreate, "newc-").prefixed(), topicACL(opDescribeConfigs, "newc-").prefixed()},
			codes: []int16{topicDenied, notRequired},
			alternatives: [][]aclSpec{
				{clusterACL(opCreate), topicACL(opAlterConfigs, "newc-").prefixed()},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return createTopics("newc-" + ph.tag)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkCreated(t, e, ph, resp, "newc-"+ph.tag, true)
			},
		},
		{
			name: "DeleteTopics", key: 20, version: 6,
			acls:      []aclSpec{topicACL(opDelete, "doomed-").prefixed()},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribe, "doomed-").prefixed(), topicACL(opAlter, "doomed-").prefixed()}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.createTopic(t, "doomed-"+ph.tag, 1)
				return deleteTopics(e, "doomed-"+ph.tag, [16]byte{})
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				st := resp.(*kmsg.DeleteTopicsResponse).Topics[0]
				checkDeleted(t, e, ph, st, "doomed-"+ph.tag)
			},
		},
		{
			// By id: the name only to a principal that may describe the
			// topic.
			name: "DeleteTopics/by topic id", key: 20, version: 6,
			acls:      []aclSpec{topicACL(opDelete, "doomid-").prefixed()},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribe, "doomid-").prefixed()}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.createTopic(t, "doomid-"+ph.tag, 1)
				return deleteTopics(e, "", e.b.topic("doomid-"+ph.tag).ID)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				st := resp.(*kmsg.DeleteTopicsResponse).Topics[0]
				name := "doomid-" + ph.tag
				// DELETE implies DESCRIBE: only the principal with no
				// ACL at all may not learn the name.
				wantName := ph.kind != "none"
				if wantName != (stringOr(st.Topic) == name) {
					t.Errorf("topic name %v (shown: want %v)", st.Topic, wantName)
				}
				checkDeleted(t, e, ph, st, name)
			},
		},
		{
			name: "DeleteRecords", key: 21, version: 2,
			acls:      []aclSpec{topicACL(opDelete, "trim")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opWrite, "trim"), topicACL(opAlter, "trim")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.produce(t, "trim", plainOpts(), 1, nil)
				ph.saved = e.b.topic("trim").Partitions[0].LogStartOffset()
				req := kmsg.NewPtrDeleteRecordsRequest()
				req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "trim", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: -1}}}}
				req.TimeoutMillis = 10000
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
				start := e.b.topic("trim").Partitions[0].LogStartOffset()
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if sp.LowWatermark != -1 || start != ph.saved {
						t.Errorf("denied: low watermark %d, log start %d (was %d)", sp.LowWatermark, start, ph.saved)
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if end := e.logEnd(t, "trim"); sp.LowWatermark != end || start != end {
					t.Errorf("low watermark %d, log start %d, want %d", sp.LowWatermark, start, end)
				}
			},
		},
		{
			name: "CreatePartitions", key: 37, version: 3,
			acls:      []aclSpec{topicACL(opAlter, "grow-").prefixed()},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opCreate, "grow-").prefixed(), clusterACL(opCreate)}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.createTopic(t, "grow-"+ph.tag, 1)
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "grow-" + ph.tag, Count: 2}}
				req.TimeoutMillis = 10000
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				st := resp.(*kmsg.CreatePartitionsResponse).Topics[0]
				name := "grow-" + ph.tag
				if ph.denied {
					wantCode(t, "topic", st.ErrorCode, ph.code)
					if stringOr(st.ErrorMessage) != "The topic authorization is failed." {
						t.Errorf("message %v", st.ErrorMessage)
					}
					if n := len(e.b.topic(name).Partitions); n != 1 {
						t.Errorf("denied: %d partitions", n)
					}
					return
				}
				wantCode(t, "topic", st.ErrorCode, 0)
				eventually(t, "new partition", func() string {
					if n := len(e.b.topic(name).Partitions); n != 2 {
						return fmt.Sprintf("%d partitions", n)
					}
					return ""
				})
			},
		},
		{
			// DESCRIBE_CONFIGS, implied by ALTER_CONFIGS; the ACL is for
			// the tests' host only.
			name: "DescribeConfigs/topic", key: 32, version: 4,
			acls:         []aclSpec{topicACL(opDescribeConfigs, "orders").onHost(authzHost)},
			codes:        []int16{topicDenied},
			alternatives: [][]aclSpec{{topicACL(opAlterConfigs, "orders")}},
			notEnough: []authzShortfall{
				{[]aclSpec{topicACL(opDescribe, "orders"), topicACL(opAlter, "orders")}, topicDenied},
				{[]aclSpec{clusterACL(opDescribeConfigs)}, topicDenied},
			},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return describeConfigs(kmsg.ConfigResourceTypeTopic, "orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkDescribed(t, ph, resp, "Topic authorization failed.")
			},
		},
		{
			name: "DescribeConfigs/broker", key: 32, version: 4,
			acls:         []aclSpec{clusterACL(opDescribeConfigs)},
			codes:        []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlterConfigs)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribe), topicACL(opDescribeConfigs, "*")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return describeConfigs(kmsg.ConfigResourceTypeBroker, "0")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				checkDescribed(t, ph, resp, "Cluster authorization failed.")
			},
		},
		{
			name: "AlterConfigs/topic", key: 33, version: 2,
			acls:      []aclSpec{topicACL(opAlterConfigs, "cfg")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribeConfigs, "cfg"), topicACL(opAlter, "cfg")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return alterConfigs(ph, kmsg.ConfigResourceTypeTopic, "cfg")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.AlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeTopic)
			},
		},
		{
			// No change: kbroker has no dynamic broker configs.
			name: "AlterConfigs/broker", key: 33, version: 2,
			acls:      []aclSpec{clusterACL(opAlterConfigs)},
			codes:     []int16{clusterDenied},
			notEnough: []authzShortfall{{[]aclSpec{clusterACL(opAlter), clusterACL(opDescribeConfigs)}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return alterConfigs(ph, kmsg.ConfigResourceTypeBroker, "0")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.AlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeBroker)
			},
		},
		{
			name: "IncrementalAlterConfigs/topic", key: 44, version: 1,
			acls:      []aclSpec{topicACL(opAlterConfigs, "cfg")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribeConfigs, "cfg")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return incrementalAlterConfigs(ph, kmsg.ConfigResourceTypeTopic, "cfg")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeTopic)
			},
		},
		{
			name: "IncrementalAlterConfigs/broker", key: 44, version: 1,
			acls:  []aclSpec{clusterACL(opAlterConfigs)},
			codes: []int16{clusterDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return incrementalAlterConfigs(ph, kmsg.ConfigResourceTypeBroker, "0")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				rr := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
				checkAltered(t, e, ph, rr.ErrorCode, rr.ErrorMessage, kmsg.ConfigResourceTypeBroker)
			},
		},
		{
			name: "DescribeLogDirs", key: 35, version: 4,
			acls: clusterDescribe, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs), topicACL(opDescribe, "*")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeLogDirsRequest()
				req.Topics = nil
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeLogDirsResponse)
				if ph.denied {
					wantCode(t, "DescribeLogDirs", r.ErrorCode, ph.code)
					if len(r.Dirs) != 0 {
						t.Errorf("denied answer lists %d dirs", len(r.Dirs))
					}
					return
				}
				wantCode(t, "DescribeLogDirs", r.ErrorCode, 0)
				if len(r.Dirs) != 1 || !has(r.Dirs[0].Topics, func(t kmsg.DescribeLogDirsResponseDirTopic) string { return t.Topic }, "secret") {
					t.Errorf("dirs %+v", r.Dirs)
				}
			},
		},
		{
			name: "ElectLeaders", key: 43, version: 2,
			acls: clusterAlter, codes: []int16{clusterDenied},
			notEnough: []authzShortfall{{[]aclSpec{clusterACL(opClusterAction), topicACL(opAlter, "orders")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return electLeaders("orders")
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ElectLeadersResponse)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				p := r.Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "ElectLeaders", r.ErrorCode, ph.code)
					wantCode(t, "partition", p.ErrorCode, ph.code)
					if p.ErrorMessage != nil {
						t.Errorf("message %q", *p.ErrorMessage)
					}
					return
				}
				wantCode(t, "ElectLeaders", r.ErrorCode, 0)
				wantCode(t, "partition", p.ErrorCode, kerr.ElectionNotNeeded.Code)
			},
		},
		{
			// An election of every partition: denied, it names none.
			name: "ElectLeaders/all partitions", key: 43, version: 2,
			acls: clusterAlter, codes: []int16{clusterDenied},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return electLeaders()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ElectLeadersResponse)
				if ph.denied {
					wantCode(t, "ElectLeaders", r.ErrorCode, ph.code)
				} else {
					wantCode(t, "ElectLeaders", r.ErrorCode, 0)
				}
				// Allowed, no partition needs an election.
				if len(r.Topics) != 0 {
					t.Errorf("answer names %+v", r.Topics)
				}
			},
		},
		{
			name: "AlterPartitionReassignments", key: 45, version: 0,
			acls: clusterAlter, codes: []int16{clusterDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opAlter, "orders"), clusterACL(opDescribe)}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				// Cancels a reassignment orders-0 does not have.
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				req.TimeoutMillis = 10000
				req.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "orders", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0}}}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AlterPartitionAssignmentsResponse)
				if ph.denied {
					wantCode(t, "AlterPartitionReassignments", r.ErrorCode, ph.code)
					if len(r.Topics) != 0 {
						t.Errorf("denied answer names %+v", r.Topics)
					}
					return
				}
				wantCode(t, "AlterPartitionReassignments", r.ErrorCode, 0)
				if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
					t.Fatalf("topics %+v", r.Topics)
				}
				wantCode(t, "partition", r.Topics[0].Partitions[0].ErrorCode, kerr.NoReassignmentInProgress.Code)
			},
		},
		{
			name: "ListPartitionReassignments", key: 46, version: 0,
			acls: clusterDescribe, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrListPartitionReassignmentsRequest()
				req.TimeoutMillis, req.Topics = 10000, nil
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ListPartitionReassignmentsResponse)
				if ph.denied {
					wantCode(t, "ListPartitionReassignments", r.ErrorCode, ph.code)
				} else {
					wantCode(t, "ListPartitionReassignments", r.ErrorCode, 0)
				}
				if len(r.Topics) != 0 {
					t.Errorf("topics %+v", r.Topics)
				}
			},
		},
		{
			// DescribeCluster itself is not authorized; the cluster's
			// operations are 0 without DESCRIBE on it.
			name: "DescribeCluster", key: 60, version: 1,
			acls: clusterDescribe, codes: []int16{0},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}, {clusterACL(kmsg.ACLOperationAll)}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeClusterRequest()
				req.IncludeClusterAuthorizedOperations = true
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeClusterResponse)
				wantCode(t, "DescribeCluster", r.ErrorCode, 0)
				if len(r.Brokers) != 1 || r.ClusterID == "" {
					t.Errorf("brokers %+v, cluster id %q", r.Brokers, r.ClusterID)
				}
				want := opsBits(opDescribe)
				switch {
				case ph.denied:
					want = 0
				case ph.super || ph.allows(kmsg.ACLOperationAll):
					want = allClusterOps
				case ph.allows(opAlter):
					want = opsBits(opAlter, opDescribe)
				}
				if r.ClusterAuthorizedOperations != want {
					t.Errorf("cluster operations %b, want %b", r.ClusterAuthorizedOperations, want)
				}
			},
		},
		{
			name: "DescribeProducers", key: 61, version: 0,
			acls:      []aclSpec{topicACL(opRead, "orders")},
			codes:     []int16{topicDenied},
			notEnough: []authzShortfall{{[]aclSpec{topicACL(opDescribe, "orders"), topicACL(opWrite, "orders")}, topicDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "orders", Partitions: []int32{0}}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				sp := resp.(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
				if ph.denied {
					wantCode(t, "partition", sp.ErrorCode, ph.code)
					if stringOr(sp.ErrorMessage) != "Topic authorization failed." || len(sp.ActiveProducers) != 0 {
						t.Errorf("denied answer: message %v, %d producers", sp.ErrorMessage, len(sp.ActiveProducers))
					}
					return
				}
				wantCode(t, "partition", sp.ErrorCode, 0)
				if len(sp.ActiveProducers) == 0 {
					t.Error("no active producers")
				}
			},
		},
	}
}

// securityCases: the ACL and SCRAM credential APIs, and the APIs Kafka
// does not authorize at all.
func securityCases(f *authzFixture) []authzCase {
	victim := func(ph *authzPhase) string { return "User:victim-" + ph.tag }
	describeACLs := func(principal *string) *kmsg.DescribeACLsRequest {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType, req.Principal = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny, principal
		return req
	}
	aclsOf := func(t *testing.T, e *authzEnv, principal string) int {
		t.Helper()
		r := e.admin(t, describeACLs(&principal)).(*kmsg.DescribeACLsResponse)
		n := 0
		for _, res := range r.Resources {
			n += len(res.ACLs)
		}
		return n
	}
	clusterAlter := []aclSpec{clusterACL(opAlter)}
	notAlter := []authzShortfall{{[]aclSpec{clusterACL(opDescribe), clusterACL(opAlterConfigs), clusterACL(opCreate)}, clusterDenied}}
	return []authzCase{
		{
			name: "DescribeAcls", key: 29, version: 3,
			acls: []aclSpec{clusterACL(opDescribe)}, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs), topicACL(opDescribe, "*")}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return describeACLs(nil)
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeACLsResponse)
				if ph.denied {
					wantCode(t, "DescribeAcls", r.ErrorCode, ph.code)
					if len(r.Resources) != 0 {
						t.Errorf("denied answer lists the ACLs of %d resources", len(r.Resources))
					}
					return
				}
				wantCode(t, "DescribeAcls", r.ErrorCode, 0)
				if len(r.Resources) < 10 {
					t.Errorf("the ACLs of %d resources", len(r.Resources))
				}
			},
		},
		{
			name: "CreateAcls", key: 30, version: 3,
			acls: clusterAlter, codes: []int16{clusterDenied}, notEnough: notAlter,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrCreateACLsRequest()
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral
				c.Principal, c.Host, c.Operation, c.PermissionType = victim(ph), "*", opRead, kmsg.ACLPermissionTypeAllow
				req.Creations = []kmsg.CreateACLsRequestCreation{c}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.CreateACLsResponse).Results[0]
				n := aclsOf(t, e, victim(ph))
				if ph.denied {
					wantCode(t, "creation", r.ErrorCode, ph.code)
					if n != 0 {
						t.Errorf("denied creation stored %d ACLs", n)
					}
					return
				}
				wantCode(t, "creation", r.ErrorCode, 0)
				if n != 1 {
					t.Errorf("%d ACLs stored", n)
				}
			},
		},
		{
			name: "DeleteAcls", key: 31, version: 3,
			acls: clusterAlter, codes: []int16{clusterDenied}, notEnough: notAlter,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				e.grant(t, victim(ph), topicACL(opRead, "orders"))
				req := kmsg.NewPtrDeleteACLsRequest()
				fl := kmsg.NewDeleteACLsRequestFilter()
				fl.ResourceType, fl.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
				fl.Operation, fl.PermissionType, fl.Principal = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny, strp(victim(ph))
				req.Filters = []kmsg.DeleteACLsRequestFilter{fl}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DeleteACLsResponse).Results[0]
				n := aclsOf(t, e, victim(ph))
				if ph.denied {
					wantCode(t, "filter", r.ErrorCode, ph.code)
					if len(r.MatchingACLs) != 0 || n != 1 {
						t.Errorf("denied deletion: %d ACLs named, %d left", len(r.MatchingACLs), n)
					}
					return
				}
				wantCode(t, "filter", r.ErrorCode, 0)
				if len(r.MatchingACLs) != 1 || r.MatchingACLs[0].Principal != victim(ph) || n != 0 {
					t.Errorf("deleted %+v, %d left", r.MatchingACLs, n)
				}
			},
		},
		{
			// A user without credentials: RESOURCE_NOT_FOUND once allowed.
			name: "DescribeUserScramCredentials", key: 50, version: 0,
			acls: []aclSpec{clusterACL(opDescribe)}, codes: []int16{clusterDenied},
			alternatives: [][]aclSpec{{clusterACL(opAlter)}},
			notEnough:    []authzShortfall{{[]aclSpec{clusterACL(opDescribeConfigs)}, clusterDenied}},
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
				req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "scram-user"}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.DescribeUserSCRAMCredentialsResponse)
				if len(r.Results) != 1 {
					t.Fatalf("results %+v", r.Results)
				}
				res := r.Results[0]
				if ph.denied {
					// Kafka's getErrorResponse: one result per user asked
					// for, without its name; no message (it is the
					// error's own).
					wantCode(t, "DescribeUserScramCredentials", r.ErrorCode, ph.code)
					wantCode(t, "result", res.ErrorCode, ph.code)
					if r.ErrorMessage != nil || res.ErrorMessage != nil || res.User != "" || len(res.CredentialInfos) != 0 {
						t.Errorf("denied answer %+v", r)
					}
					return
				}
				wantCode(t, "DescribeUserScramCredentials", r.ErrorCode, 0)
				wantCode(t, "result", res.ErrorCode, kerr.ResourceNotFound.Code)
				if res.User != "scram-user" {
					t.Errorf("user %q", res.User)
				}
			},
		},
		{
			// Deleting a credential: once allowed, the answer is the
			// validation's (the SCRAM tests cover it).
			name: "AlterUserScramCredentials", key: 51, version: 0,
			acls: clusterAlter, codes: []int16{clusterDenied}, notEnough: notAlter,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "scram-user", Mechanism: 1}}
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.AlterUserSCRAMCredentialsResponse)
				if len(r.Results) != 1 || r.Results[0].User != "scram-user" {
					t.Fatalf("results %+v", r.Results)
				}
				res := r.Results[0]
				if ph.denied {
					wantCode(t, "result", res.ErrorCode, ph.code)
					if res.ErrorMessage != nil {
						t.Errorf("message %q", *res.ErrorMessage)
					}
					return
				}
				if res.ErrorCode == clusterDenied {
					t.Errorf("allowed principal answered %s", errName(res.ErrorCode))
				}
			},
		},
		{
			name: "SaslHandshake", key: 17, version: 1,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrSASLHandshakeRequest()
				req.Mechanism = "PLAIN"
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				// A listener without SASL: Kafka's answer to everyone.
				wantCode(t, "SaslHandshake", resp.(*kmsg.SASLHandshakeResponse).ErrorCode, kerr.IllegalSaslState.Code)
			},
		},
		{
			name: "SaslAuthenticate", key: 36, version: 2,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				return kmsg.NewPtrSASLAuthenticateRequest()
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				wantCode(t, "SaslAuthenticate", resp.(*kmsg.SASLAuthenticateResponse).ErrorCode, kerr.IllegalSaslState.Code)
			},
		},
		{
			name: "ApiVersions", key: 18, version: 4,
			build: func(t *testing.T, e *authzEnv, ph *authzPhase) kmsg.Request {
				req := kmsg.NewPtrApiVersionsRequest()
				req.ClientSoftwareName, req.ClientSoftwareVersion = "authz-test", "1"
				return req
			},
			check: func(t *testing.T, e *authzEnv, ph *authzPhase, resp kmsg.Response) {
				r := resp.(*kmsg.ApiVersionsResponse)
				wantCode(t, "ApiVersions", r.ErrorCode, 0)
				if len(r.ApiKeys) != len(supportedAPIs()) {
					t.Errorf("%d API keys, want %d", len(r.ApiKeys), len(supportedAPIs()))
				}
			},
		},
	}
}
