package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/replica/audit"
)

// Exit codes of `kbroker audit`: 0 all replicas agree, 1 some diverge,
// 2 a bad command line (exitUsage), 3 none diverge but some partitions
// (or replicas) could not be read.
const (
	auditDivergent  = 1
	auditIncomplete = 3
)

const auditUsage = "usage: kbroker audit --bootstrap-server host:port[,host:port] [--topic a,b] [--max-bytes n] [--timeout d]"

// fetchVersion is the highest Fetch version the audit sends; from v11 a
// follower serves a consumer's fetch (KIP-392), which is how every
// replica is read, as Kafka's ReplicaVerificationTool does.
const fetchVersion = 16

// runAudit is `kbroker audit`: it compares, for every partition of the
// topics (all but compacted ones by default), each follower's batches
// below the high watermarks with the leader's, reading every replica
// with Kafka's debugging-consumer fetch (replica id -2). Each divergent
// follower is printed as "topic partition offset leader leader-crc
// follower follower-crc" (a side without a batch there prints "none").
func runAudit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kbroker audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap-server", "", "brokers to start from, host:port[,host:port]")
	topicList := fs.String("topic", "", "topics to audit, comma-separated (default: every topic not compacted)")
	maxBytes := fs.Int("max-bytes", 1<<20, "bytes per fetch")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *bootstrap == "" || fs.NArg() > 0 || *maxBytes <= 0 {
		fmt.Fprintln(stderr, auditUsage)
		return exitUsage
	}
	var topics []string
	if *topicList != "" {
		topics = strings.Split(*topicList, ",")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(*bootstrap, ",")...), kgo.ClientID("kbroker-audit"))
	if err != nil {
		fmt.Fprintf(stderr, "kbroker audit: %v\n", err)
		return exitUsage
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	return auditCluster(ctx, cl, topics, int32(*maxBytes), stdout, stderr)
}

type auditPartition struct {
	topic     string
	topicID   [16]byte
	partition int32
	leader    int32
	replicas  []int32
}

func auditCluster(ctx context.Context, cl *kgo.Client, topics []string, maxBytes int32, stdout, stderr io.Writer) int {
	parts, err := auditPartitions(ctx, cl, topics, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kbroker audit: %v\n", err)
		return auditIncomplete
	}
	starts, err := logStarts(ctx, cl, parts)
	if err != nil {
		fmt.Fprintf(stderr, "kbroker audit: %v\n", err)
		return auditIncomplete
	}
	var divergent, incomplete, compared, audited int
	for _, p := range parts {
		start, ok := starts[p.key()]
		if !ok || p.leader < 0 {
			fmt.Fprintf(stderr, "%s %d: not audited: no leader or log start offset\n", p.topic, p.partition)
			incomplete++
			continue
		}
		followers := slices.DeleteFunc(slices.Clone(p.replicas), func(r int32) bool { return r == p.leader })
		read := func(ctx context.Context, replica int32, from int64) ([]byte, int64, error) {
			req := audit.FetchRequest(p.topic, p.partition, p.topicID, from, -1, maxBytes, fetchVersion, -2)
			resp, err := cl.Broker(int(replica)).Request(ctx, req)
			if err != nil {
				return nil, 0, err
			}
			rp, err := audit.FetchedPartition(resp.(*kmsg.FetchResponse), p.partition)
			if err != nil {
				return nil, 0, err
			}
			return rp.RecordBatches, rp.HighWatermark, nil
		}
		r := audit.CrossCheck(ctx, p.leader, followers, start, read)
		audited++
		compared += r.Compared
		for _, f := range r.Findings {
			fmt.Fprintf(stdout, "%s %d %d %d %s %d %s\n", p.topic, p.partition, f.Offset,
				f.Leader, audit.CRCText(f.Divergence.Leader, f.LeaderMissing),
				f.Follower, audit.CRCText(f.Divergence.Follower, f.FollowerMissing))
			divergent++
		}
		for id, err := range r.Failed {
			fmt.Fprintf(stderr, "%s %d: replica %d not read: %v\n", p.topic, p.partition, id, err)
			incomplete++
		}
	}
	fmt.Fprintf(stderr, "audited %d partitions, %d follower batches equal to their leader's, %d divergent replicas, %d not read\n", audited, compared, divergent, incomplete)
	switch {
	case divergent > 0:
		return auditDivergent
	case incomplete > 0 || ctx.Err() != nil:
		return auditIncomplete
	}
	return 0
}

func (p auditPartition) key() string { return fmt.Sprintf("%s\x00%d", p.topic, p.partition) }

// auditPartitions lists the partitions of topics (every topic when none
// are named) with more than one replica, leaving out compacted topics
// unless named: each replica's cleaner runs on its own, so their cleaned
// segments legitimately differ.
func auditPartitions(ctx context.Context, cl *kgo.Client, topics []string, stderr io.Writer) ([]auditPartition, error) {
	mreq := kmsg.NewPtrMetadataRequest()
	for _, t := range topics { // none: a null list, every topic
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		mreq.Topics = append(mreq.Topics, rt)
	}
	mresp, err := mreq.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	compacted := map[string]bool{}
	if topics == nil {
		if compacted, err = compactedTopics(ctx, cl, mresp); err != nil {
			return nil, err
		}
	}
	var out []auditPartition
	for _, t := range mresp.Topics {
		name := *t.Topic
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			fmt.Fprintf(stderr, "%s: not audited: %v\n", name, err)
			continue
		}
		if compacted[name] {
			continue
		}
		for _, p := range t.Partitions {
			if len(p.Replicas) < 2 {
				continue
			}
			out = append(out, auditPartition{topic: name, topicID: t.TopicID, partition: p.Partition, leader: p.Leader, replicas: p.Replicas})
		}
	}
	slices.SortFunc(out, func(a, b auditPartition) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return int(a.partition - b.partition)
	})
	return out, nil
}

func compactedTopics(ctx context.Context, cl *kgo.Client, mresp *kmsg.MetadataResponse) (map[string]bool, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range mresp.Topics {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = *t.Topic
		r.ConfigNames = []string{"cleanup.policy"}
		req.Resources = append(req.Resources, r)
	}
	out := map[string]bool{}
	if len(req.Resources) == 0 {
		return out, nil
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("describe configs: %w", err)
	}
	for _, r := range resp.Resources {
		for _, c := range r.Configs {
			if c.Name == "cleanup.policy" && c.Value != nil && strings.Contains(*c.Value, "compact") {
				out[r.ResourceName] = true
			}
		}
	}
	return out, nil
}

// logStarts asks the leaders for each partition's log start offset.
func logStarts(ctx context.Context, cl *kgo.Client, parts []auditPartition) (map[string]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	byTopic := map[string]int{}
	for _, p := range parts {
		i, ok := byTopic[p.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[p.topic] = i
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = p.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p.partition
		rp.CurrentLeaderEpoch = -1
		rp.Timestamp = -2 // earliest
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	out := map[string]int64{}
	if len(req.Topics) == 0 {
		return out, nil
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				out[auditPartition{topic: t.Topic, partition: p.Partition}.key()] = p.Offset
			}
		}
	}
	return out, nil
}
