package fetcher

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/internal/wirefix"
)

// fetchRequest builds the round's Fetch (RemoteLeaderEndPoint.buildFetch) for
// sts, whose fetch offsets it records in sent so the answer can be matched to
// them. No fetch session: session id 0 and epoch -1 ask for a full,
// sessionless fetch, which every broker serves.
func (f *fetcher) fetchRequest(sts []*partitionState) (*kmsg.FetchRequest, []sentPartition) {
	req := kmsg.NewPtrFetchRequest()
	req.Version = f.cfg.FetchVersion
	// ReplicaID is the field up to v14, the ReplicaState tag from v15
	// (KIP-903); both are set, and wirefix.FitFetch drops the tag when the
	// version sent turns out lower.
	req.ReplicaID = f.cfg.BrokerID
	req.ReplicaState.ID = f.cfg.BrokerID
	req.ReplicaState.Epoch = f.cfg.BrokerEpoch
	req.MaxWaitMillis = int32(f.cfg.ReplicaFetchWaitMax.Milliseconds())
	req.MinBytes = f.cfg.ReplicaFetchMinBytes
	req.MaxBytes = f.cfg.ReplicaFetchResponseMaxBytes
	req.IsolationLevel = 0
	req.SessionID = 0
	req.SessionEpoch = -1

	sent := make([]sentPartition, 0, len(sts))
	byTopic := map[string]int{}
	for _, st := range sts {
		id := st.p.TopicID()
		if id == ([16]byte{}) {
			// Without a topic id for every partition Kafka caps Fetch
			// at v12: v13+ names topics by id only.
			req.Version = min(req.Version, topicIDVersion-1)
		}
		i, ok := byTopic[st.part.Topic]
		if !ok {
			t := kmsg.NewFetchRequestTopic()
			t.Topic = st.part.Topic
			t.TopicID = id
			req.Topics = append(req.Topics, t)
			i = len(req.Topics) - 1
			byTopic[st.part.Topic] = i
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = st.part.Partition
		p.CurrentLeaderEpoch = st.leaderEpoch
		p.FetchOffset = st.fetchOffset
		p.LastFetchedEpoch = lastFetchedEpoch(st.p.LeaderEpochEntries(), st.p.LogEndOffset())
		p.LogStartOffset = st.p.LogStartOffset()
		p.PartitionMaxBytes = f.cfg.ReplicaFetchMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		sent = append(sent, sentPartition{st: st, fetchOffset: st.fetchOffset, leaderEpoch: st.leaderEpoch})
	}
	wirefix.FitFetch(req)
	return req, sent
}

// sentPartition is what a partition's answer is checked against: Kafka
// applies a response only if the partition's fetch offset did not change
// meanwhile (AbstractFetcherThread.processFetchRequest): a truncation or
// a new leader epoch in between makes the answer stale.
type sentPartition struct {
	st          *partitionState
	fetchOffset int64
	leaderEpoch int32
}

// fetchResponsePartitions indexes a response by topic id (v13+) or name.
func fetchResponsePartitions(resp *kmsg.FetchResponse, sts []sentPartition) map[*partitionState]*kmsg.FetchResponseTopicPartition {
	type key struct {
		id    [16]byte
		topic string
		part  int32
	}
	byKey := map[key]*kmsg.FetchResponseTopicPartition{}
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			k := key{part: p.Partition}
			if resp.Version >= topicIDVersion {
				k.id = t.TopicID
			} else {
				k.topic = t.Topic
			}
			byKey[k] = p
		}
	}
	out := map[*partitionState]*kmsg.FetchResponseTopicPartition{}
	for _, s := range sts {
		k := key{part: s.st.part.Partition}
		if resp.Version >= topicIDVersion {
			k.id = s.st.p.TopicID()
		} else {
			k.topic = s.st.part.Topic
		}
		if p, ok := byKey[k]; ok {
			out[s.st] = p
		}
	}
	return out
}
