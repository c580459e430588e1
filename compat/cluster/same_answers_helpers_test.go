package cluster

// The machinery of TestSameAnswers: the two brokers under comparison, the
// normalisation of their answers, the field-by-field comparison and the
// table a difference is reported in.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sameStepTimeout bounds one step on one broker: its requests and any
// wait for metadata to settle.
const sameStepTimeout = 30 * time.Second

// sameSide is one of the two brokers that must answer alike.
type sameSide struct {
	name   string // "standalone" or "cluster"
	addr   string
	logDir string
	zkAddr string // "" for the standalone broker

	// Clients by acks: kgo rewrites a raw ProduceRequest's acks to the
	// client's own, so each acks level needs its own client.
	acksAll, acksLeader, acksNone *kgo.Client

	// opaque names the values that legitimately differ between the two
	// brokers (topic ids, the cluster id, member ids) by their order of
	// first appearance, so that "the same id again" still compares.
	opaque   map[string]map[string]string
	topicIDs map[string]int // ids named per topic so far

	// What earlier steps learnt from this broker and later steps send
	// back to it: the group member and the idempotent producer.
	memberID      string
	generation    int32
	producerID    int64
	producerEpoch int16
}

func newSameSide(t *testing.T, name, addr, logDir, zkAddr string) *sameSide {
	t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.DialTimeout(2 * time.Second),
		kgo.ClientID("same-answers"), kgo.ProduceRequestTimeout(10 * time.Second),
	}
	s := &sameSide{name: name, addr: addr, logDir: logDir, zkAddr: zkAddr, opaque: map[string]map[string]string{}, topicIDs: map[string]int{}}
	s.acksAll = newClient(t, []string{addr}, base...)
	s.acksLeader = newClient(t, []string{addr}, append(base, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())...)
	s.acksNone = newClient(t, []string{addr}, append(base, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())...)
	return s
}

// send sends req to exactly this broker (its seed connection: no routing
// to a controller or a leader, no retries) with acks -1 for a Produce.
func (s *sameSide) send(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return sendVia(ctx, s.acksAll, req)
}

func sendVia(ctx context.Context, cl *kgo.Client, req kmsg.Request) (kmsg.Response, error) {
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("no seed broker")
	}
	return seeds[0].Request(ctx, req)
}

// metadata asks for the named topics without auto-creation.
func (s *sameSide) metadata(ctx context.Context, autoCreate bool, topics ...string) (*kmsg.MetadataResponse, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = autoCreate
	for _, tp := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(tp)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := s.send(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.MetadataResponse), nil
}

// waitLeaders polls Metadata (bounded by ctx and by count) until topic has
// exactly n partitions, each with a leader and no error. Both brokers are
// waited for the same way: a cluster's metadata reaches the broker
// asynchronously, and the comparison is of the settled state.
func (s *sameSide) waitLeaders(ctx context.Context, topic string, n int) error {
	var last string
	for attempt := 0; attempt < 200; attempt++ {
		resp, err := s.metadata(ctx, false, topic)
		switch {
		case err != nil:
			last = err.Error()
		case len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0:
			last = fmt.Sprintf("topic answer %s", compactJSON(resp.Topics))
		case len(resp.Topics[0].Partitions) != n:
			last = fmt.Sprintf("%d partitions, want %d", len(resp.Topics[0].Partitions), n)
		default:
			ready := true
			for _, p := range resp.Topics[0].Partitions {
				if p.ErrorCode != 0 || p.Leader < 0 {
					ready = false
					last = fmt.Sprintf("partition %d: error %d leader %d", p.Partition, p.ErrorCode, p.Leader)
				}
			}
			if ready {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: leaders of %s not known: %v (last: %s)", s.name, topic, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: leaders of %s not known after 200 polls (last: %s)", s.name, topic, last)
}

// topicID is the topic's id as this broker's Metadata gives it.
func (s *sameSide) topicID(ctx context.Context, topic string) ([16]byte, error) {
	resp, err := s.metadata(ctx, false, topic)
	if err != nil {
		return [16]byte{}, err
	}
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return [16]byte{}, fmt.Errorf("metadata for %s: %s", topic, compactJSON(resp.Topics))
	}
	return resp.Topics[0].TopicID, nil
}

// leaderEpoch is the partition's leader epoch in this broker's Metadata.
func (s *sameSide) leaderEpoch(ctx context.Context, topic string, p int32) (int32, error) {
	resp, err := s.metadata(ctx, false, topic)
	if err != nil {
		return 0, err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.Partition == p {
				return rp.LeaderEpoch, nil
			}
		}
	}
	return 0, fmt.Errorf("metadata for %s has no partition %d", topic, p)
}

// sameRecord is one record of a produced batch; its timestamp is the
// batch's fixed base plus ts, so that both brokers store identical bytes.
type sameRecord struct {
	key, value string
	ts         int64
}

// sameBaseTimestamp is the CreateTime of every produced record (plus its
// delta): fixed, so that ListOffsets by timestamp asks both brokers the
// same question.
const sameBaseTimestamp = int64(1_700_000_000_000)

// encodeBatch is a v2 record batch, uncompressed, with the given producer
// fields (-1s for a plain producer), at sameBaseTimestamp.
func encodeBatch(producerID int64, epoch int16, firstSeq int32, recs ...sameRecord) []byte {
	return encodeBatchAt(sameBaseTimestamp, producerID, epoch, firstSeq, recs...)
}

// encodeBatchNow is encodeBatch at the current time. Records that must
// outlive a run of more than a few minutes need it: a batch stamped years
// ago in a segment of its own is deleted by time retention
// (log.retention.hours, checked every 5 minutes), and one stamped years
// before the batch after it makes the log roll there (segment.ms), which
// gives it that segment of its own.
func encodeBatchNow(producerID int64, epoch int16, firstSeq int32, recs ...sameRecord) []byte {
	return encodeBatchAt(time.Now().UnixMilli(), producerID, epoch, firstSeq, recs...)
}

func encodeBatchAt(base, producerID int64, epoch int16, firstSeq int32, recs ...sameRecord) []byte {
	var records []byte
	var maxTS int64
	for i, r := range recs {
		rec := kmsg.NewRecord()
		rec.TimestampDelta64 = r.ts
		rec.OffsetDelta = int32(i)
		rec.Key = []byte(r.key)
		rec.Value = []byte(r.value)
		body := rec.AppendTo(nil)[1:] // without the Length varint (0, one byte)
		rec.Length = int32(len(body))
		records = append(records, rec.AppendTo(nil)...)
		maxTS = max(maxTS, r.ts)
	}
	batch := kmsg.NewRecordBatch()
	batch.Magic = 2
	batch.ProducerID = producerID
	batch.ProducerEpoch = epoch
	batch.FirstSequence = firstSeq
	batch.FirstTimestamp = base
	batch.MaxTimestamp = base + maxTS
	batch.LastOffsetDelta = int32(len(recs) - 1)
	batch.NumRecords = int32(len(recs))
	batch.Records = records
	batch.PartitionLeaderEpoch = -1
	raw := batch.AppendTo(nil)
	batch.Length = int32(len(raw) - 12)
	raw = batch.AppendTo(nil)
	// CRC-32C covers everything from the attributes on (offset 21).
	batch.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return batch.AppendTo(nil)
}

// produceRequest is one partition's batch, acks as the sending client's.
func produceRequest(topic string, partition int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.TimeoutMillis = 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// decodedBatch is a fetched record batch as the comparison sees it: every
// header field and record, not the bytes (whose CRC would hide which
// field differs).
type decodedBatch struct {
	FirstOffset          int64
	PartitionLeaderEpoch int32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	FirstSequence        int32
	NumRecords           int32
	Records              []decodedRecord
	Error                string `json:",omitempty"`
}

type decodedRecord struct {
	OffsetDelta    int32
	TimestampDelta int64
	Key, Value     string
}

// decodeBatches splits a fetch's record set into batches; a trailing
// partial batch (a fetch may cut one) is reported as such.
func decodeBatches(raw []byte) []decodedBatch {
	var out []decodedBatch
	for len(raw) > 0 {
		if len(raw) < 12 {
			out = append(out, decodedBatch{Error: fmt.Sprintf("%d trailing bytes", len(raw))})
			break
		}
		n := int(binary.BigEndian.Uint32(raw[8:12])) + 12
		if n > len(raw) {
			out = append(out, decodedBatch{Error: fmt.Sprintf("partial batch of %d of %d bytes", len(raw), n)})
			break
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:n]); err != nil {
			out = append(out, decodedBatch{Error: err.Error()})
			break
		}
		d := decodedBatch{
			FirstOffset: b.FirstOffset, PartitionLeaderEpoch: b.PartitionLeaderEpoch, Attributes: b.Attributes,
			LastOffsetDelta: b.LastOffsetDelta, FirstTimestamp: b.FirstTimestamp, MaxTimestamp: b.MaxTimestamp,
			ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, FirstSequence: b.FirstSequence, NumRecords: b.NumRecords,
		}
		recs := b.Records
		for i := int32(0); i < b.NumRecords && len(recs) > 0; i++ {
			l, size := binary.Varint(recs)
			if size <= 0 || int(l)+size > len(recs) {
				d.Error = fmt.Sprintf("record %d: bad length", i)
				break
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:int(l)+size]); err != nil {
				d.Error = fmt.Sprintf("record %d: %v", i, err)
				break
			}
			d.Records = append(d.Records, decodedRecord{r.OffsetDelta, r.TimestampDelta64, string(r.Key), string(r.Value)})
			recs = recs[int(l)+size:]
		}
		out = append(out, d)
		raw = raw[n:]
	}
	return out
}

// normalise turns an answer into a plain tree (maps, slices, strings,
// json.Numbers) with everything that legitimately differs between the two
// brokers replaced by a placeholder:
//   - ThrottleMillis (load-dependent), UnknownTags;
//   - Port, and the broker's address, log dir and ZooKeeper address inside
//     any string (listeners, log.dirs, a log dir's path);
//   - the zookeeper.connect config entry, which is what makes the two
//     modes differ;
//   - TopicID, ClusterID and group member ids, by order of first
//     appearance on this broker (so a changed id still shows);
//   - TotalBytes and UsableBytes of a log dir (the disk's, not ours).
//
// Arrays of objects that all carry a distinct Topic, Name, Partition,
// NodeID... become maps keyed by it: Kafka does not order them.
func (s *sameSide) normalise(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return "undecodable: " + err.Error()
	}
	return s.normaliseTree(tree)
}

func (s *sameSide) opaqueName(kind, v string) string {
	m := s.opaque[kind]
	if m == nil {
		m = map[string]string{}
		s.opaque[kind] = m
	}
	if n, ok := m[v]; ok {
		return n
	}
	n := fmt.Sprintf("<%s #%d>", kind, len(m)+1)
	m[v] = n
	return n
}

// topicIDName names a topic id by its topic, "<id of T #1>", the second
// id seen for T (after a re-creation) "#2"; an id seen without its name
// (a Fetch v13+ answer) takes the name it was first seen with.
func (s *sameSide) topicIDName(id, topic string) string {
	names := s.opaque["topic id"]
	if names == nil {
		names = map[string]string{}
		s.opaque["topic id"] = names
	}
	if n, ok := names[id]; ok {
		return n
	}
	if topic == "" {
		topic = "an unnamed topic"
	}
	s.topicIDs[topic]++
	n := fmt.Sprintf("<id of %s #%d>", topic, s.topicIDs[topic])
	names[id] = n
	return n
}

var arrayKeys = []string{"Topic", "Name", "Partition", "NodeID", "Dir", "ApiKey", "Group", "MemberID", "ResourceName", "BrokerID", "Key"}

func (s *sameSide) normaliseTree(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		// In key order: ids are numbered by first appearance, which must
		// not depend on Go's random map order.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			x := v[k]
			switch k {
			case "ThrottleMillis", "UnknownTags":
				continue
			case "Port":
				out[k] = "<port>"
				continue
			case "TotalBytes", "UsableBytes":
				if n, ok := x.(json.Number); ok && !strings.HasPrefix(n.String(), "-") {
					out[k] = "<bytes>"
					continue
				}
			case "TopicID":
				if arr, ok := x.([]any); ok {
					id := make([]byte, 0, len(arr))
					zero := true
					for _, b := range arr {
						n, _ := b.(json.Number).Int64()
						zero = zero && n == 0
						id = append(id, byte(n))
					}
					if zero {
						out[k] = "<zero topic id>"
					} else {
						topic, _ := v["Topic"].(string)
						if topic == "" {
							topic, _ = v["Name"].(string)
						}
						out[k] = s.topicIDName(hex.EncodeToString(id), topic)
					}
					continue
				}
			case "ClusterID":
				if str, ok := x.(string); ok && str != "" {
					out[k] = s.opaqueName("cluster id", str)
					continue
				}
			case "MemberID", "LeaderID":
				if str, ok := x.(string); ok && str != "" {
					out[k] = s.opaqueName("member", str)
					continue
				}
			}
			out[k] = s.normaliseTree(x)
		}
		return out
	case []any:
		items := make([]any, len(v))
		for i, x := range v {
			items[i] = s.normaliseTree(x)
		}
		if keyed := keyByField(items); keyed != nil {
			// zookeeper.connect is what makes the two modes: the cluster
			// broker has one, the standalone broker none, and kbroker
			// lists a nullable broker config only when it is set.
			delete(keyed, "Name=zookeeper.connect")
			return keyed
		}
		return items
	case string:
		r := v
		if s.addr != "" {
			r = strings.ReplaceAll(r, s.addr, "<addr>")
		}
		if s.logDir != "" {
			r = strings.ReplaceAll(r, s.logDir, "<log dir>")
		}
		if s.zkAddr != "" {
			r = strings.ReplaceAll(r, s.zkAddr, "<zookeeper>")
		}
		return r
	}
	return v
}

// keyByField turns a list of objects into a map by the first of arrayKeys
// that every element has, with distinct values; nil when none fits.
func keyByField(items []any) map[string]any {
	if len(items) == 0 {
		return nil
	}
	for _, key := range arrayKeys {
		out := map[string]any{}
		ok := true
		for _, it := range items {
			m, isMap := it.(map[string]any)
			if !isMap {
				return nil
			}
			kv, has := m[key]
			if !has {
				ok = false
				break
			}
			name := key + "=" + fmt.Sprint(kv)
			if _, dup := out[name]; dup {
				ok = false
				break
			}
			out[name] = it
		}
		if ok {
			return out
		}
	}
	return nil
}

// sameDiff is one field whose value differs.
type sameDiff struct {
	step, path  string
	left, right string
}

// diffTrees lists every leaf that differs between two normalised trees.
func diffTrees(path string, a, b any, out *[]sameDiff) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			av, aok := am[k]
			bv, bok := bm[k]
			p := joinPath(path, k)
			switch {
			case !aok:
				*out = append(*out, sameDiff{path: p, left: "(absent)", right: compactJSON(bv)})
			case !bok:
				*out = append(*out, sameDiff{path: p, left: compactJSON(av), right: "(absent)"})
			default:
				diffTrees(p, av, bv, out)
			}
		}
		return
	}
	as, aIsList := a.([]any)
	bs, bIsList := b.([]any)
	if aIsList && bIsList && len(as) == len(bs) {
		for i := range as {
			diffTrees(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out)
		}
		return
	}
	if ja, jb := compactJSON(a), compactJSON(b); ja != jb {
		*out = append(*out, sameDiff{path: path, left: ja, right: jb})
	}
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func compactJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(raw)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// diffTable renders differences as an aligned table.
func diffTable(diffs []sameDiff) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "STEP\tFIELD\tSTANDALONE\tCLUSTER")
	for _, d := range diffs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", d.step, d.path, d.left, d.right)
	}
	w.Flush()
	return b.String()
}
