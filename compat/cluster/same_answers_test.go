package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbroker/kbroker/compat/harness"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Issue 10 acceptance: a standalone broker and a one-broker ZooKeeper
// cluster give the same answers to the same admin and data requests.
//
// Both brokers are configured alike (broker.id 1, the cluster harness's
// timeouts and replication factors of 1); every step sends the same raw
// requests to each, straight to the broker (no client routing, no
// retries), and compares the answers field by field after normalise has
// replaced what legitimately differs (ports, paths, cluster and topic ids,
// member ids, throttle times, disk sizes). A step's difference fails that
// step with a table: field, standalone answer, cluster answer.
//
// Waits are only where Kafka's own answer depends on time — metadata
// reaching the broker after a CreateTopics or CreatePartitions, the offsets
// topic appearing before FindCoordinator succeeds — and both brokers are
// waited for the same way; an answer itself is never retried.
func TestSameAnswers(t *testing.T) {
	runSameAnswers(t, nil, sameSteps())
}

// The same with Kafka's defaults for the settings a single broker cannot
// satisfy: replication factors of 3 and no auto-creation. A one-broker
// cluster and a standalone broker must refuse, or place, alike.
func TestSameAnswersKafkaDefaults(t *testing.T) {
	runSameAnswers(t, []string{
		"auto.create.topics.enable=false",
		"default.replication.factor=3",
		"offsets.topic.replication.factor=3",
		"transaction.state.log.replication.factor=3",
	}, sameDefaultsSteps())
}

// runSameAnswers starts a one-broker ZooKeeper cluster and a standalone
// broker configured alike, plus overrides for both, and runs the steps
// against each.
func runSameAnswers(t *testing.T, overrides []string, steps []sameStep) {
	c := harness.StartCluster(t, 1, overrides...)
	cb := c.Brokers[0]
	// The settings the cluster harness gives its brokers, so that the two
	// differ only in zookeeper.connect.
	sa := harness.StartBroker(t, append([]string{
		"broker.id=1",
		"default.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"zookeeper.session.timeout.ms=6000",
		"replica.lag.time.max.ms=6000",
		"controlled.shutdown.retry.backoff.ms=500",
	}, overrides...)...)
	sides := [2]*sameSide{
		newSameSide(t, "standalone", sa.Addr, sa.LogDir, ""),
		newSameSide(t, "cluster", cb.Addr, cb.LogDir, c.ZK.Addr),
	}

	var all []sameDiff
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var answers [2]any
			for i, s := range sides {
				ctx, cancel := context.WithTimeout(context.Background(), sameStepTimeout)
				start := time.Now()
				ans, err := st.run(ctx, s)
				cancel()
				if err != nil {
					t.Fatalf("%s: %v (after %v)", s.name, err, time.Since(start).Round(time.Millisecond))
				}
				answers[i] = s.normalise(ans)
				keepAnswer(t, s.name, answers[i])
			}
			var diffs []sameDiff
			diffTrees("", answers[0], answers[1], &diffs)
			for i := range diffs {
				diffs[i].step = st.name
			}
			if len(diffs) > 0 {
				all = append(all, diffs...)
				t.Errorf("standalone and cluster answer %s differently in %d fields:\n%s", st.name, len(diffs), diffTable(diffs))
			}
		})
	}
	if len(all) > 0 {
		t.Errorf("%d differences in all:\n%s", len(all), diffTable(all))
	}
}

// keepAnswer writes a normalised answer to $KBROKER_KEEP_LOGS/same-answers/
// when that variable is set (as the harness keeps broker logs), so that a
// passing step's answers can be read too.
func keepAnswer(t *testing.T, side string, answer any) {
	dir := os.Getenv("KBROKER_KEEP_LOGS")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, "same-answers")
	raw, err := json.MarshalIndent(answer, "", "  ")
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
		err = os.WriteFile(filepath.Join(dir, name+"."+side+".json"), raw, 0o644)
	}
	if err != nil {
		t.Logf("keep answer: %v", err)
	}
}

// sameStep is one exchange sent to each broker in turn; its answer (any
// value, usually kmsg responses) is compared after normalisation. An error
// is for a failed wait or a broken precondition, not for an answer.
type sameStep struct {
	name string
	run  func(ctx context.Context, s *sameSide) (any, error)
}

// ask sends one request; a request that fails on the wire is an answer
// too (the error, compared like any other).
func ask(ctx context.Context, s *sameSide, req kmsg.Request) any {
	resp, err := s.send(ctx, req)
	if err != nil {
		return map[string]string{"request error": err.Error()}
	}
	return resp
}

func askVia(ctx context.Context, s *sameSide, acks string, req kmsg.Request) any {
	cl := map[string]*kgo.Client{"all": s.acksAll, "leader": s.acksLeader, "none": s.acksNone}[acks]
	resp, err := sendVia(ctx, cl, req)
	if err != nil {
		return map[string]string{"request error": err.Error()}
	}
	return resp
}

func createTopicsReq(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10_000
	req.ValidateOnly = validateOnly
	req.Topics = topics
	return req
}

func newTopic(name string, partitions int32, rf int16, configs ...string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, rf
	for _, kv := range configs {
		k, v, _ := strings.Cut(kv, "=")
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	return rt
}

func assignedTopic(name string, assignment ...[]int32) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
	for p, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	return rt
}

func listOffsetsReq(isolation int8, topic string, timestamps map[int32]int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p, ts := range timestamps {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch, rp.MaxNumOffsets = p, ts, -1, 1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchReq is a sessionless fetch of one topic's partitions from the given
// offsets; the topic goes by name and by id, whichever the version uses.
func fetchReq(topic string, id [16]byte, offsets map[int32]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 50
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = 0, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	for p, off := range offsets {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = p, off, -1, -1
		rp.LogStartOffset = -1
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchAnswer is a fetch response with each partition's records decoded.
func fetchAnswer(ctx context.Context, s *sameSide, req *kmsg.FetchRequest) any {
	resp, err := s.send(ctx, req)
	if err != nil {
		return map[string]string{"request error": err.Error()}
	}
	fr := resp.(*kmsg.FetchResponse)
	type partition struct {
		kmsg.FetchResponseTopicPartition
		RecordBatches []decodedBatch
	}
	type topic struct {
		Topic      string
		TopicID    [16]byte
		Partitions []partition
	}
	out := struct {
		Version   int16
		ErrorCode int16
		SessionID int32
		Topics    []topic
	}{fr.Version, fr.ErrorCode, fr.SessionID, nil}
	for _, rt := range fr.Topics {
		tt := topic{Topic: rt.Topic, TopicID: rt.TopicID}
		for _, rp := range rt.Partitions {
			batches := decodeBatches(rp.RecordBatches)
			rp.RecordBatches = nil
			tt.Partitions = append(tt.Partitions, partition{rp, batches})
		}
		out.Topics = append(out.Topics, tt)
	}
	return out
}

func describeConfigsReq(synonyms bool, resources ...kmsg.DescribeConfigsRequestResource) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = synonyms
	req.Resources = resources
	return req
}

func configResource(typ kmsg.ConfigResourceType, name string, keys ...string) kmsg.DescribeConfigsRequestResource {
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.ConfigNames = typ, name, keys
	return r
}

func alterConfigsReq(validateOnly bool, typ kmsg.ConfigResourceType, name string, kvs ...string) *kmsg.AlterConfigsRequest {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return req
}

// incrementalReq changes name's configs; each op is "set k=v", "delete k",
// "append k=v" or "subtract k=v".
func incrementalReq(validateOnly bool, typ kmsg.ConfigResourceType, name string, ops ...string) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for _, op := range ops {
		verb, kv, _ := strings.Cut(op, " ")
		k, v, hasValue := strings.Cut(kv, "=")
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name = k
		if hasValue {
			c.Value = kmsg.StringPtr(v)
		}
		c.Op = map[string]kmsg.IncrementalAlterConfigOp{
			"set": kmsg.IncrementalAlterConfigOpSet, "delete": kmsg.IncrementalAlterConfigOpDelete,
			"append": kmsg.IncrementalAlterConfigOpAppend, "subtract": kmsg.IncrementalAlterConfigOpSubtract,
		}[verb]
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	return req
}

func createPartitionsReq(validateOnly bool, topic string, count int32, assignment ...[]int32) *kmsg.CreatePartitionsRequest {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 10_000
	req.ValidateOnly = validateOnly
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = topic, count
	for _, replicas := range assignment {
		a := kmsg.NewCreatePartitionsRequestTopicAssignment()
		a.Replicas = replicas
		rt.Assignment = append(rt.Assignment, a)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func deleteRecordsReq(topic string, before map[int32]int64) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 10_000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	for p, off := range before {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, off
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func deleteTopicsReq(names ...string) *kmsg.DeleteTopicsRequest {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 10_000
	for _, n := range names {
		req.TopicNames = append(req.TopicNames, n)
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

const (
	sameGroup    = "same-group"
	sameDataT    = "same-data"
	sameIdemT    = "same-idem"
	sameAutoT    = "same-auto"
	sameAssigned = "same-assigned"
	sameMinISR   = "same-min-isr"
)

// sameSteps are run in order; later steps use the topics, records, group
// and producer of earlier ones.
func sameSteps() []sameStep {
	brokerRes := kmsg.ConfigResourceTypeBroker
	topicRes := kmsg.ConfigResourceTypeTopic
	return []sameStep{
		{"ApiVersions", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrApiVersionsRequest()
			req.ClientSoftwareName, req.ClientSoftwareVersion = "same-answers", "1"
			return ask(ctx, s, req), nil
		}},
		{"DescribeCluster", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrDescribeClusterRequest()
			req.IncludeClusterAuthorizedOperations = true
			return ask(ctx, s, req), nil
		}},
		{"Metadata all topics, fresh broker", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrMetadataRequest()
			req.Topics = nil
			return ask(ctx, s, req), nil
		}},
		{"Metadata unknown topic, auto-create off", func(ctx context.Context, s *sameSide) (any, error) {
			return s.metadataAnswer(ctx, false, "same-nowhere")
		}},
		{"Metadata unknown topic, auto-create on", func(ctx context.Context, s *sameSide) (any, error) {
			return s.metadataAnswer(ctx, true, sameAutoT)
		}},
		{"Metadata of the auto-created topic once its leader is known", func(ctx context.Context, s *sameSide) (any, error) {
			if err := s.waitLeaders(ctx, sameAutoT, 1); err != nil {
				return nil, err
			}
			return s.metadataAnswer(ctx, false, sameAutoT)
		}},
		{"CreateTopics validate-only", func(ctx context.Context, s *sameSide) (any, error) {
			create := ask(ctx, s, createTopicsReq(true,
				newTopic("same-validate", 3, 1, "cleanup.policy=compact", "retention.ms=1000"),
				newTopic("same-validate-default", -1, -1)))
			meta, err := s.metadataAnswer(ctx, false, "same-validate", "same-validate-default")
			return map[string]any{"CreateTopics": create, "Metadata after": meta}, err
		}},
		{"CreateTopics bad names", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, createTopicsReq(false,
				newTopic("", 1, 1), newTopic(".", 1, 1), newTopic("..", 1, 1),
				newTopic("bad/name", 1, 1), newTopic("with space", 1, 1),
				newTopic(strings.Repeat("x", 250), 1, 1),
				newTopic("dup", 1, 1), newTopic("dup", 1, 1))), nil
		}},
		{"CreateTopics replication factors and partition counts", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, createTopicsReq(false,
				newTopic("same-rf2", 1, 2), newTopic("same-rf3", 3, 3),
				newTopic("same-rf0", 1, 0), newTopic("same-rf-2", 1, -2),
				newTopic("same-p0", 0, 1), newTopic("same-p-2", -2, 1))), nil
		}},
		{"CreateTopics explicit assignment, bad ones", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, createTopicsReq(false,
				assignedTopic("same-assign-unknown-broker", []int32{7}),
				assignedTopic("same-assign-dup-replica", []int32{1, 1}),
				assignedTopic("same-assign-uneven", []int32{1}, []int32{}),
				func() kmsg.CreateTopicsRequestTopic {
					rt := assignedTopic("same-assign-and-count", []int32{1})
					rt.NumPartitions = 1
					return rt
				}())), nil
		}},
		{"CreateTopics bad configs", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, createTopicsReq(false,
				newTopic("same-bad-config", 1, 1, "no.such.config=1"),
				newTopic("same-bad-value", 1, 1, "retention.ms=abc"),
				newTopic("same-bad-policy", 1, 1, "cleanup.policy=sometimes"))), nil
		}},
		{"CreateTopics good ones", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, createTopicsReq(false,
				newTopic(sameDataT, 2, 1, "retention.ms=3600000", "message.timestamp.type=CreateTime"),
				newTopic(sameIdemT, 1, -1),
				newTopic(sameMinISR, 1, 1, "min.insync.replicas=2"),
				assignedTopic(sameAssigned, []int32{1}, []int32{1}))), nil
		}},
		{"Metadata of the created topics once their leaders are known", func(ctx context.Context, s *sameSide) (any, error) {
			for tp, n := range map[string]int{sameDataT: 2, sameIdemT: 1, sameMinISR: 1, sameAssigned: 2} {
				if err := s.waitLeaders(ctx, tp, n); err != nil {
					return nil, err
				}
			}
			return s.metadataAnswer(ctx, false, sameDataT, sameIdemT, sameMinISR, sameAssigned)
		}},
		{"CreateTopics existing topic", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, createTopicsReq(false, newTopic(sameDataT, 2, 1))), nil
		}},
		{"Produce acks=1", func(ctx context.Context, s *sameSide) (any, error) {
			batch := encodeBatch(-1, -1, -1, sameRecord{"k0", "v0", 0}, sameRecord{"k1", "v1", 10}, sameRecord{"k2", "v2", 20})
			return askVia(ctx, s, "leader", produceRequest(sameDataT, 0, batch)), nil
		}},
		{"Produce acks=-1", func(ctx context.Context, s *sameSide) (any, error) {
			batch := encodeBatch(-1, -1, -1, sameRecord{"k3", "v3", 30}, sameRecord{"k4", "v4", 40})
			return askVia(ctx, s, "all", produceRequest(sameDataT, 0, batch)), nil
		}},
		{"Produce acks=0, then the partition's end offset", func(ctx context.Context, s *sameSide) (any, error) {
			batch := encodeBatch(-1, -1, -1, sameRecord{"a", "x", 5}, sameRecord{"b", "y", 15})
			produced := askVia(ctx, s, "none", produceRequest(sameDataT, 1, batch))
			// Nothing answers an acks=0 produce; the end offset shows
			// whether it was written. The write is asynchronous to the
			// request, so poll (bounded) until it shows or time runs out;
			// the offset seen last is the answer.
			var latest any
			for attempt := 0; attempt < 50; attempt++ {
				resp, err := s.send(ctx, listOffsetsReq(0, sameDataT, map[int32]int64{1: -1}))
				latest = resp
				if err != nil {
					latest = map[string]string{"request error": err.Error()}
				} else if lo := resp.(*kmsg.ListOffsetsResponse); len(lo.Topics) == 1 && len(lo.Topics[0].Partitions) == 1 && lo.Topics[0].Partitions[0].Offset == 2 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			return map[string]any{"Produce": produced, "ListOffsets latest": latest}, nil
		}},
		{"Produce with fewer in-sync replicas than min.insync.replicas", func(ctx context.Context, s *sameSide) (any, error) {
			batch := encodeBatch(-1, -1, -1, sameRecord{"m", "v", 0})
			return map[string]any{
				"1 acks=-1":               askVia(ctx, s, "all", produceRequest(sameMinISR, 0, batch)),
				"2 acks=1":                askVia(ctx, s, "leader", produceRequest(sameMinISR, 0, batch)),
				"3 ListOffsets latest":    ask(ctx, s, listOffsetsReq(0, sameMinISR, map[int32]int64{0: -1})),
				"4 DescribeConfigs topic": ask(ctx, s, describeConfigsReq(false, configResource(kmsg.ConfigResourceTypeTopic, sameMinISR, "min.insync.replicas"))),
			}, nil
		}},
		{"Produce unknown topic and partition", func(ctx context.Context, s *sameSide) (any, error) {
			batch := encodeBatch(-1, -1, -1, sameRecord{"k", "v", 0})
			return map[string]any{
				"unknown topic":     askVia(ctx, s, "all", produceRequest("same-nowhere", 0, batch)),
				"unknown partition": askVia(ctx, s, "all", produceRequest(sameDataT, 9, batch)),
			}, nil
		}},
		{"InitProducerId", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionTimeoutMillis = 60_000
			req.ProducerID, req.ProducerEpoch = -1, -1
			resp, err := s.send(ctx, req)
			if err != nil {
				return map[string]string{"request error": err.Error()}, nil
			}
			r := resp.(*kmsg.InitProducerIDResponse)
			s.producerID, s.producerEpoch = r.ProducerID, r.ProducerEpoch
			return r, nil
		}},
		{"Produce idempotent: first, next, duplicate, gap", func(ctx context.Context, s *sameSide) (any, error) {
			pid, ep := s.producerID, s.producerEpoch
			first := encodeBatch(pid, ep, 0, sameRecord{"i0", "v", 0}, sameRecord{"i1", "v", 1}, sameRecord{"i2", "v", 2})
			next := encodeBatch(pid, ep, 3, sameRecord{"i3", "v", 3})
			gap := encodeBatch(pid, ep, 10, sameRecord{"i10", "v", 10})
			return map[string]any{
				"1 first (seq 0-2)":       askVia(ctx, s, "all", produceRequest(sameIdemT, 0, first)),
				"2 next (seq 3)":          askVia(ctx, s, "all", produceRequest(sameIdemT, 0, next)),
				"3 duplicate of seq 0-2":  askVia(ctx, s, "all", produceRequest(sameIdemT, 0, first)),
				"4 gap (seq 10)":          askVia(ctx, s, "all", produceRequest(sameIdemT, 0, gap)),
				"5 unknown epoch (ep +1)": askVia(ctx, s, "all", produceRequest(sameIdemT, 0, encodeBatch(pid, ep+1, 5, sameRecord{"e", "v", 0}))),
			}, nil
		}},
		{"DescribeProducers", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrDescribeProducersRequest()
			for tp, ps := range map[string][]int32{sameIdemT: {0}, sameDataT: {0, 9}, "same-nowhere": {0}} {
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = tp, ps
				req.Topics = append(req.Topics, rt)
			}
			return ask(ctx, s, req), nil
		}},
		{"InitProducerId epoch bump of an existing producer", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.TransactionTimeoutMillis = 60_000
			req.ProducerID, req.ProducerEpoch = s.producerID, s.producerEpoch
			return ask(ctx, s, req), nil
		}},
		{"Fetch", func(ctx context.Context, s *sameSide) (any, error) {
			id, err := s.topicID(ctx, sameDataT)
			if err != nil {
				return nil, err
			}
			idemID, err := s.topicID(ctx, sameIdemT)
			if err != nil {
				return nil, err
			}
			return map[string]any{
				"same-data from 0":       fetchAnswer(ctx, s, fetchReq(sameDataT, id, map[int32]int64{0: 0, 1: 0})),
				"same-data from 3":       fetchAnswer(ctx, s, fetchReq(sameDataT, id, map[int32]int64{0: 3})),
				"same-data out of range": fetchAnswer(ctx, s, fetchReq(sameDataT, id, map[int32]int64{0: 100})),
				"same-idem from 0":       fetchAnswer(ctx, s, fetchReq(sameIdemT, idemID, map[int32]int64{0: 0})),
			}, nil
		}},
		{"Fetch and ListOffsets with the current, no and a future leader epoch", func(ctx context.Context, s *sameSide) (any, error) {
			id, err := s.topicID(ctx, sameDataT)
			if err != nil {
				return nil, err
			}
			epoch, err := s.leaderEpoch(ctx, sameDataT, 0)
			if err != nil {
				return nil, err
			}
			out := map[string]any{}
			for name, e := range map[string]int32{"current": epoch, "none (-1)": -1, "future": epoch + 1} {
				f := fetchReq(sameDataT, id, map[int32]int64{0: 0})
				f.Topics[0].Partitions[0].CurrentLeaderEpoch = e
				out["Fetch, "+name] = fetchAnswer(ctx, s, f)
				lo := listOffsetsReq(0, sameDataT, map[int32]int64{0: -1})
				lo.Topics[0].Partitions[0].CurrentLeaderEpoch = e
				out["ListOffsets, "+name] = ask(ctx, s, lo)
			}
			return out, nil
		}},
		{"ListOffsets", func(ctx context.Context, s *sameSide) (any, error) {
			out := map[string]any{}
			for name, ts := range map[string]int64{
				"earliest": -2, "latest": -1, "max-timestamp": -3,
				"timestamp base+15": sameBaseTimestamp + 15, "timestamp base+40": sameBaseTimestamp + 40,
				"timestamp after all": sameBaseTimestamp + 1000, "timestamp 0": 0,
			} {
				out[name] = ask(ctx, s, listOffsetsReq(0, sameDataT, map[int32]int64{0: ts, 1: ts}))
			}
			out["latest read_committed"] = ask(ctx, s, listOffsetsReq(1, sameDataT, map[int32]int64{0: -1}))
			out["unknown partition"] = ask(ctx, s, listOffsetsReq(0, sameDataT, map[int32]int64{9: -1}))
			out["unknown topic"] = ask(ctx, s, listOffsetsReq(0, "same-nowhere", map[int32]int64{0: -1}))
			return out, nil
		}},
		{"OffsetForLeaderEpoch as a consumer sends it", func(ctx context.Context, s *sameSide) (any, error) {
			epoch, err := s.leaderEpoch(ctx, sameDataT, 0)
			if err != nil {
				return nil, err
			}
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.ReplicaID = -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = sameDataT
			for p, e := range map[int32][2]int32{0: {-1, 0}, 1: {epoch, epoch}} {
				rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = p, e[0], e[1]
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			return ask(ctx, s, req), nil
		}},
		{"DescribeConfigs topic", func(ctx context.Context, s *sameSide) (any, error) {
			return map[string]any{
				"all, with synonyms": ask(ctx, s, describeConfigsReq(true, configResource(topicRes, sameDataT))),
				"named keys":         ask(ctx, s, describeConfigsReq(false, configResource(topicRes, sameDataT, "retention.ms", "cleanup.policy", "no.such.config"))),
				"unknown topic":      ask(ctx, s, describeConfigsReq(false, configResource(topicRes, "same-nowhere"))),
			}, nil
		}},
		{"DescribeConfigs broker", func(ctx context.Context, s *sameSide) (any, error) {
			return map[string]any{
				"broker 1, all, with synonyms": ask(ctx, s, describeConfigsReq(true, configResource(brokerRes, "1"))),
				"broker 1, named keys":         ask(ctx, s, describeConfigsReq(false, configResource(brokerRes, "1", "broker.id", "num.partitions", "default.replication.factor", "offsets.topic.replication.factor", "min.insync.replicas", "unclean.leader.election.enable"))),
				"broker 7":                     ask(ctx, s, describeConfigsReq(false, configResource(brokerRes, "7"))),
				"cluster default":              ask(ctx, s, describeConfigsReq(false, configResource(brokerRes, ""))),
			}, nil
		}},
		{"AlterConfigs topic and broker", func(ctx context.Context, s *sameSide) (any, error) {
			out := map[string]any{
				"1 topic validate-only": ask(ctx, s, alterConfigsReq(true, topicRes, sameDataT, "retention.ms=1000")),
				"2 topic":               ask(ctx, s, alterConfigsReq(false, topicRes, sameDataT, "retention.ms=7200000", "cleanup.policy=delete")),
				"3 topic bad value":     ask(ctx, s, alterConfigsReq(false, topicRes, sameDataT, "retention.ms=abc")),
				"4 topic unknown":       ask(ctx, s, alterConfigsReq(false, topicRes, "same-nowhere", "retention.ms=1000")),
				"5 broker 1":            ask(ctx, s, alterConfigsReq(false, brokerRes, "1", "log.retention.ms=1000")),
				"6 broker 7":            ask(ctx, s, alterConfigsReq(false, brokerRes, "7", "log.retention.ms=1000")),
			}
			out["7 DescribeConfigs topic after"] = ask(ctx, s, describeConfigsReq(true, configResource(topicRes, sameDataT, "retention.ms", "cleanup.policy", "message.timestamp.type")))
			return out, nil
		}},
		{"IncrementalAlterConfigs topic and broker", func(ctx context.Context, s *sameSide) (any, error) {
			out := map[string]any{
				"1 topic validate-only": ask(ctx, s, incrementalReq(true, topicRes, sameDataT, "set segment.ms=60000")),
				"2 topic":               ask(ctx, s, incrementalReq(false, topicRes, sameDataT, "set segment.ms=3600000", "delete retention.ms", "append cleanup.policy=compact")),
				"3 topic bad":           ask(ctx, s, incrementalReq(false, topicRes, sameDataT, "set no.such.config=1")),
				"4 topic subtract":      ask(ctx, s, incrementalReq(false, topicRes, sameDataT, "subtract cleanup.policy=compact")),
				"5 broker 1":            ask(ctx, s, incrementalReq(false, brokerRes, "1", "set log.retention.ms=1000")),
				"6 cluster default":     ask(ctx, s, incrementalReq(false, brokerRes, "", "set log.retention.ms=1000")),
			}
			out["7 DescribeConfigs topic after"] = ask(ctx, s, describeConfigsReq(true, configResource(topicRes, sameDataT, "retention.ms", "cleanup.policy", "segment.ms")))
			return out, nil
		}},
		{"CreatePartitions", func(ctx context.Context, s *sameSide) (any, error) {
			return map[string]any{
				"1 validate-only 2 to 3":   ask(ctx, s, createPartitionsReq(true, sameDataT, 3)),
				"2 decrease":               ask(ctx, s, createPartitionsReq(false, sameDataT, 1)),
				"3 same count":             ask(ctx, s, createPartitionsReq(false, sameDataT, 2)),
				"4 assignment to broker 7": ask(ctx, s, createPartitionsReq(false, sameDataT, 3, []int32{7})),
				"5 rf 2 assignment":        ask(ctx, s, createPartitionsReq(false, sameDataT, 3, []int32{1, 1})),
				"6 unknown topic":          ask(ctx, s, createPartitionsReq(false, "same-nowhere", 3)),
				"7 2 to 4":                 ask(ctx, s, createPartitionsReq(false, sameDataT, 4)),
			}, nil
		}},
		{"Metadata after CreatePartitions once the leaders are known", func(ctx context.Context, s *sameSide) (any, error) {
			if err := s.waitLeaders(ctx, sameDataT, 4); err != nil {
				return nil, err
			}
			return s.metadataAnswer(ctx, false, sameDataT)
		}},
		{"DeleteRecords", func(ctx context.Context, s *sameSide) (any, error) {
			return map[string]any{
				"1 p0 before 2, p1 before HW (-1)": ask(ctx, s, deleteRecordsReq(sameDataT, map[int32]int64{0: 2, 1: -1})),
				"2 p0 beyond the HW":               ask(ctx, s, deleteRecordsReq(sameDataT, map[int32]int64{0: 100})),
				"3 unknown partition":              ask(ctx, s, deleteRecordsReq(sameDataT, map[int32]int64{9: 0})),
				"4 ListOffsets earliest after":     ask(ctx, s, listOffsetsReq(0, sameDataT, map[int32]int64{0: -2, 1: -2, 2: -2})),
			}, nil
		}},
		{"FindCoordinator once the offsets topic exists", func(ctx context.Context, s *sameSide) (any, error) {
			return s.findCoordinator(ctx, 20*time.Second)
		}},
		{"JoinGroup twice (member id required, then joined)", func(ctx context.Context, s *sameSide) (any, error) {
			join := func(member string) (*kmsg.JoinGroupResponse, any) {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group = sameGroup
				req.SessionTimeoutMillis = 30_000
				req.RebalanceTimeoutMillis = 10_000
				req.MemberID = member
				req.ProtocolType = "consumer"
				p := kmsg.NewJoinGroupRequestProtocol()
				p.Name, p.Metadata = "range", []byte("same-metadata")
				req.Protocols = append(req.Protocols, p)
				resp, err := s.send(ctx, req)
				if err != nil {
					return nil, map[string]string{"request error": err.Error()}
				}
				return resp.(*kmsg.JoinGroupResponse), resp
			}
			r1, a1 := join("")
			if r1 == nil {
				return a1, nil
			}
			r2, a2 := join(r1.MemberID)
			if r2 != nil {
				s.memberID, s.generation = r2.MemberID, r2.Generation
			}
			return map[string]any{"1 first": a1, "2 with the member id": a2}, nil
		}},
		{"SyncGroup", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrSyncGroupRequest()
			req.Group, req.Generation, req.MemberID = sameGroup, s.generation, s.memberID
			req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID, a.MemberAssignment = s.memberID, []byte("same-assignment")
			req.GroupAssignment = append(req.GroupAssignment, a)
			return ask(ctx, s, req), nil
		}},
		{"Heartbeat", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrHeartbeatRequest()
			req.Group, req.Generation, req.MemberID = sameGroup, s.generation, s.memberID
			stale := kmsg.NewPtrHeartbeatRequest()
			stale.Group, stale.Generation, stale.MemberID = sameGroup, s.generation+5, s.memberID
			return map[string]any{"current": ask(ctx, s, req), "wrong generation": ask(ctx, s, stale)}, nil
		}},
		{"OffsetCommit", func(ctx context.Context, s *sameSide) (any, error) {
			commit := func(generation int32, member string, offsets map[int32]int64) any {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation, req.MemberID = sameGroup, generation, member
				req.RetentionTimeMillis = -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = sameDataT
				for p, off := range offsets {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, off, -1, kmsg.StringPtr("m")
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				return ask(ctx, s, req)
			}
			return map[string]any{
				"1 member":           commit(s.generation, s.memberID, map[int32]int64{0: 3, 1: 1}),
				"2 wrong generation": commit(s.generation+5, s.memberID, map[int32]int64{0: 4}),
				"3 unknown member":   commit(s.generation, "same-stranger", map[int32]int64{0: 4}),
			}, nil
		}},
		{"OffsetFetch", func(ctx context.Context, s *sameSide) (any, error) {
			fetch := func(group string, topics bool) any {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = group
				g := kmsg.NewOffsetFetchRequestGroup()
				g.Group = group
				if topics {
					rt := kmsg.NewOffsetFetchRequestTopic()
					rt.Topic, rt.Partitions = sameDataT, []int32{0, 1, 2}
					req.Topics = append(req.Topics, rt)
					gt := kmsg.NewOffsetFetchRequestGroupTopic()
					gt.Topic, gt.Partitions = sameDataT, []int32{0, 1, 2}
					g.Topics = append(g.Topics, gt)
				}
				req.Groups = append(req.Groups, g)
				return ask(ctx, s, req)
			}
			return map[string]any{
				"named partitions": fetch(sameGroup, true),
				"all partitions":   fetch(sameGroup, false),
				"unknown group":    fetch("same-no-group", true),
			}, nil
		}},
		{"DescribeGroups and ListGroups with a member", func(ctx context.Context, s *sameSide) (any, error) {
			dg := kmsg.NewPtrDescribeGroupsRequest()
			dg.Groups = []string{sameGroup, "same-no-group"}
			lg := kmsg.NewPtrListGroupsRequest()
			return map[string]any{"DescribeGroups": ask(ctx, s, dg), "ListGroups": ask(ctx, s, lg)}, nil
		}},
		{"DeleteGroups of a group with a member", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = []string{sameGroup, "same-no-group"}
			return ask(ctx, s, req), nil
		}},
		{"OffsetDelete while subscribed", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, offsetDeleteReq(sameGroup, sameDataT, 0)), nil
		}},
		{"LeaveGroup", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.Group, req.MemberID = sameGroup, s.memberID
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID = s.memberID
			req.Members = append(req.Members, m)
			return ask(ctx, s, req), nil
		}},
		{"OffsetDelete, DescribeGroups, ListGroups, DeleteGroups of the empty group", func(ctx context.Context, s *sameSide) (any, error) {
			dg := kmsg.NewPtrDescribeGroupsRequest()
			dg.Groups = []string{sameGroup}
			lg := kmsg.NewPtrListGroupsRequest()
			lg.StatesFilter = []string{"Empty"}
			out := map[string]any{
				"1 OffsetDelete p0":          ask(ctx, s, offsetDeleteReq(sameGroup, sameDataT, 0)),
				"2 OffsetDelete unknown grp": ask(ctx, s, offsetDeleteReq("same-no-group", sameDataT, 0)),
				"3 DescribeGroups":           ask(ctx, s, dg),
				"4 ListGroups Empty":         ask(ctx, s, lg),
			}
			of := kmsg.NewPtrOffsetFetchRequest()
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = sameGroup
			of.Group = sameGroup
			of.Groups = append(of.Groups, g)
			out["5 OffsetFetch all"] = ask(ctx, s, of)
			del := kmsg.NewPtrDeleteGroupsRequest()
			del.Groups = []string{sameGroup}
			out["6 DeleteGroups"] = ask(ctx, s, del)
			out["7 DescribeGroups after"] = ask(ctx, s, dg)
			return out, nil
		}},
		{"DescribeLogDirs", func(ctx context.Context, s *sameSide) (any, error) {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			for tp, ps := range map[string][]int32{sameDataT: {0, 1, 2, 3}, sameIdemT: {0}, "same-nowhere": {0}} {
				rt := kmsg.NewDescribeLogDirsRequestTopic()
				rt.Topic, rt.Partitions = tp, ps
				req.Topics = append(req.Topics, rt)
			}
			return ask(ctx, s, req), nil
		}},
		{"ElectLeaders", func(ctx context.Context, s *sameSide) (any, error) {
			elect := func(typ int8, topics map[string][]int32) any {
				req := kmsg.NewPtrElectLeadersRequest()
				req.ElectionType = typ
				req.TimeoutMillis = 10_000
				if topics != nil {
					req.Topics = []kmsg.ElectLeadersRequestTopic{}
				}
				for tp, ps := range topics {
					rt := kmsg.NewElectLeadersRequestTopic()
					rt.Topic, rt.Partitions = tp, ps
					req.Topics = append(req.Topics, rt)
				}
				return ask(ctx, s, req)
			}
			return map[string]any{
				"preferred, named":  elect(0, map[string][]int32{sameDataT: {0, 1}}),
				"unclean, named":    elect(1, map[string][]int32{sameDataT: {0}}),
				"preferred, all":    elect(0, nil),
				"unknown partition": elect(0, map[string][]int32{sameDataT: {9}, "same-nowhere": {0}}),
				"~ Metadata after":  ask(ctx, s, metadataReq(false, sameDataT)),
			}, nil
		}},
		{"AlterPartitionReassignments and ListPartitionReassignments", func(ctx context.Context, s *sameSide) (any, error) {
			alter := func(parts map[int32][]int32) any {
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				req.TimeoutMillis = 10_000
				rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
				rt.Topic = sameDataT
				for p, replicas := range parts {
					rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
					rp.Partition, rp.Replicas = p, replicas
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
				return ask(ctx, s, req)
			}
			list := func(topics bool) any {
				req := kmsg.NewPtrListPartitionReassignmentsRequest()
				req.TimeoutMillis = 10_000
				if topics {
					rt := kmsg.NewListPartitionReassignmentsRequestTopic()
					rt.Topic, rt.Partitions = sameDataT, []int32{0, 1}
					req.Topics = append(req.Topics, rt)
				}
				return ask(ctx, s, req)
			}
			return map[string]any{
				"1 to the current replicas": alter(map[int32][]int32{0: {1}}),
				"2 to an unknown broker":    alter(map[int32][]int32{1: {7}}),
				"3 cancel with none going":  alter(map[int32][]int32{2: nil}),
				"4 unknown partition":       alter(map[int32][]int32{9: {1}}),
				"5 list, all":               list(false),
				"6 list, named":             list(true),
			}, nil
		}},
		{"Metadata a moment after the reassignment", func(ctx context.Context, s *sameSide) (any, error) {
			// The controller's leader-epoch change reaches the broker's
			// metadata after the answer; a one-broker cluster needs
			// milliseconds. The same fixed pause on both, not a retry.
			time.Sleep(time.Second)
			return s.metadataAnswer(ctx, false, sameDataT)
		}},
		{"DeleteTopics, then Metadata at once", func(ctx context.Context, s *sameSide) (any, error) {
			out := map[string]any{
				"1 DeleteTopics":           ask(ctx, s, deleteTopicsReq(sameAssigned, "same-nowhere")),
				"2 Metadata right after":   ask(ctx, s, metadataReq(false, sameAssigned)),
				"4 DeleteTopics of a name": ask(ctx, s, deleteTopicsReq(sameAutoT)),
			}
			all := kmsg.NewPtrMetadataRequest()
			all.Topics = nil
			out["5 Metadata all topics right after"] = ask(ctx, s, all)
			return out, nil
		}},
		{"Create, delete and re-create a topic, each once settled", func(ctx context.Context, s *sameSide) (any, error) {
			const topic = "same-recreated"
			out := map[string]any{"1 CreateTopics": ask(ctx, s, createTopicsReq(false, newTopic(topic, 1, 1)))}
			if err := s.waitLeaders(ctx, topic, 1); err != nil {
				return nil, err
			}
			out["2 DeleteTopics"] = ask(ctx, s, deleteTopicsReq(topic))
			// Kafka answers DeleteTopics once the broker's metadata has
			// dropped the topic (the step before compares Metadata right
			// after), but the controller removes the topic's znodes a
			// moment later, and until then Kafka refuses to create the
			// name again (TOPIC_ALREADY_EXISTS). That window is timing,
			// not an answer: wait (bounded) until Metadata no longer
			// lists the topic and a validate-only CreateTopics would
			// accept it, then compare the real re-creation.
			if err := s.waitGone(ctx, topic); err != nil {
				return nil, err
			}
			if err := s.waitCreatable(ctx, topic); err != nil {
				return nil, err
			}
			again, err := s.send(ctx, createTopicsReq(false, newTopic(topic, 1, 1)))
			if err != nil {
				out["3 CreateTopics again"] = map[string]string{"request error": err.Error()}
				return out, nil
			}
			out["3 CreateTopics again"] = again
			if ct := again.(*kmsg.CreateTopicsResponse); len(ct.Topics) != 1 || ct.Topics[0].ErrorCode != 0 {
				// Refused: there is nothing to wait for, the refusal is
				// the answer.
				return out, nil
			}
			if err := s.waitLeaders(ctx, topic, 1); err != nil {
				return nil, err
			}
			out["4 Metadata once the leader is known"] = ask(ctx, s, metadataReq(false, topic))
			return out, nil
		}},
		{"ControlledShutdown for a broker that is not registered", func(ctx context.Context, s *sameSide) (any, error) {
			// Broker 7 does not exist, so no leadership moves: the answer
			// is the controller's refusal, whichever mode.
			req := kmsg.NewPtrControlledShutdownRequest()
			req.BrokerID, req.BrokerEpoch = 7, -1
			return ask(ctx, s, req), nil
		}},
	}
}

func metadataReq(autoCreate bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = autoCreate
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// metadataAnswer is one Metadata answer for the named topics.
func (s *sameSide) metadataAnswer(ctx context.Context, autoCreate bool, topics ...string) (any, error) {
	return ask(ctx, s, metadataReq(autoCreate, topics...)), nil
}

func offsetDeleteReq(group, topic string, partitions ...int32) *kmsg.OffsetDeleteRequest {
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = group
	rt := kmsg.NewOffsetDeleteRequestTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewOffsetDeleteRequestTopicPartition()
		rp.Partition = p
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// findCoordinator polls FindCoordinator for sameGroup until it names a
// coordinator or patience runs out, and returns the last answer. The first
// FindCoordinator creates __consumer_offsets, and Kafka answers
// COORDINATOR_NOT_AVAILABLE until that topic's leaders are known (or for
// as long as it cannot be created): the settled answer is compared.
func (s *sameSide) findCoordinator(ctx context.Context, patience time.Duration) (any, error) {
	deadline := time.Now().Add(patience)
	var last any
	for attempt := 0; attempt < 200; attempt++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey = sameGroup
		req.CoordinatorKeys = []string{sameGroup}
		resp, err := s.send(ctx, req)
		if err != nil {
			return nil, err
		}
		last = resp
		r := resp.(*kmsg.FindCoordinatorResponse)
		ok := r.ErrorCode == 0 && len(r.Coordinators) <= 1
		for _, c := range r.Coordinators {
			ok = ok && c.ErrorCode == 0
		}
		if ok || time.Now().After(deadline) {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("FindCoordinator: %v; last answer %s", ctx.Err(), compactJSON(last))
		case <-time.After(200 * time.Millisecond):
		}
	}
	return last, nil
}

// sameDefaultsSteps are for brokers with Kafka's defaults of replication
// factor 3 and auto.create.topics.enable=false.
func sameDefaultsSteps() []sameStep {
	return []sameStep{
		{"Metadata unknown topic, auto-create asked for but disabled", func(ctx context.Context, s *sameSide) (any, error) {
			return s.metadataAnswer(ctx, true, sameAutoT)
		}},
		{"CreateTopics with the default replication factor of 3", func(ctx context.Context, s *sameSide) (any, error) {
			return map[string]any{
				"validate-only": ask(ctx, s, createTopicsReq(true, newTopic("same-default-rf", 1, -1))),
				"create":        ask(ctx, s, createTopicsReq(false, newTopic("same-default-rf", 1, -1))),
				"Metadata":      ask(ctx, s, metadataReq(false, "same-default-rf")),
			}, nil
		}},
		{"FindCoordinator with offsets.topic.replication.factor=3, after 5 s at most", func(ctx context.Context, s *sameSide) (any, error) {
			return s.findCoordinator(ctx, 5*time.Second)
		}},
		{"Metadata of __consumer_offsets then", func(ctx context.Context, s *sameSide) (any, error) {
			return s.metadataAnswer(ctx, false, "__consumer_offsets")
		}},
		{"DescribeConfigs broker replication settings", func(ctx context.Context, s *sameSide) (any, error) {
			return ask(ctx, s, describeConfigsReq(true, configResource(kmsg.ConfigResourceTypeBroker, "1",
				"auto.create.topics.enable", "default.replication.factor", "offsets.topic.replication.factor", "transaction.state.log.replication.factor"))), nil
		}},
	}
}

// waitGone polls Metadata (bounded) until topic is unknown.
func (s *sameSide) waitGone(ctx context.Context, topic string) error {
	var last string
	for attempt := 0; attempt < 100; attempt++ {
		resp, err := s.metadata(ctx, false, topic)
		switch {
		case err != nil:
			last = err.Error()
		case len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 3:
			return nil
		default:
			last = compactJSON(resp.Topics)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s still listed: %v (last: %s)", topic, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s still listed after 100 polls (last: %s)", topic, last)
}

// waitCreatable polls a validate-only CreateTopics of topic (bounded) until
// it no longer answers TOPIC_ALREADY_EXISTS.
func (s *sameSide) waitCreatable(ctx context.Context, topic string) error {
	var last string
	for attempt := 0; attempt < 100; attempt++ {
		resp, err := s.send(ctx, createTopicsReq(true, newTopic(topic, 1, 1)))
		if err != nil {
			last = err.Error()
		} else if ct := resp.(*kmsg.CreateTopicsResponse); len(ct.Topics) == 1 && ct.Topics[0].ErrorCode != 36 {
			return nil
		} else {
			last = compactJSON(ct.Topics)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not creatable: %v (last: %s)", topic, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not creatable after 100 tries (last: %s)", topic, last)
}
