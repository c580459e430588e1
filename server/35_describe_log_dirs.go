package server

// DescribeLogDirs, versions 1-4.
//
// Every log dir is listed, with the partitions it holds (all of them for a
// null topic list, else the ones asked for), their size on disk and an
// offset lag of 0: there are no future replicas (intra-broker moves) whose
// lag could be reported. v4 adds the file system's total and usable bytes.

import (
	"context"
	"sort"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/protocol"
)

func init() { register(kmsg.DescribeLogDirs.Int16(), 1, 4, handleDescribeLogDirs) }

func handleDescribeLogDirs(b *Broker, _ context.Context, req *protocol.Request) protocol.Response {
	r := req.Body.(*kmsg.DescribeLogDirsRequest)
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	resp.SetVersion(req.Version)
	if !b.authorizeCluster(req, kmsg.ACLOperationDescribe) {
		// Kafka answers an empty list (v3+: with the error code).
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		resp.Dirs = []kmsg.DescribeLogDirsResponseDir{}
		return protocol.Response{Msg: resp}
	}

	var wanted map[string]map[int32]bool
	if r.Topics != nil {
		wanted = map[string]map[int32]bool{}
		for _, t := range r.Topics {
			if wanted[t.Topic] == nil {
				wanted[t.Topic] = map[int32]bool{}
			}
			for _, p := range t.Partitions {
				wanted[t.Topic][p] = true
			}
		}
	}
	byDir := map[string]map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for _, pl := range b.logs.All() {
		if t := b.topic(pl.Topic); t == nil || t.ID != pl.TopicID {
			continue // being deleted
		}
		if wanted != nil && !wanted[pl.Topic][pl.Partition] {
			continue
		}
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition = pl.Partition
		p.Size = pl.Log.Size()
		if byDir[pl.Dir] == nil {
			byDir[pl.Dir] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
		}
		byDir[pl.Dir][pl.Topic] = append(byDir[pl.Dir][pl.Topic], p)
	}
	for _, dir := range b.logs.Dirs() {
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir = dir
		d.Topics = []kmsg.DescribeLogDirsResponseDirTopic{}
		if b.logs.DirOffline(dir) {
			// As Kafka lists a failed dir: the error, nothing else.
			d.ErrorCode = kerr.KafkaStorageError.Code
			resp.Dirs = append(resp.Dirs, d)
			continue
		}
		for _, name := range sortedKeysOf(byDir[dir]) {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = name
			t.Partitions = byDir[dir][name]
			sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].Partition < t.Partitions[j].Partition })
			d.Topics = append(d.Topics, t)
		}
		if req.Version >= 4 {
			var st syscall.Statfs_t
			if err := syscall.Statfs(dir, &st); err == nil {
				d.TotalBytes = int64(st.Blocks) * int64(st.Bsize)
				d.UsableBytes = int64(st.Bavail) * int64(st.Bsize)
			}
		}
		resp.Dirs = append(resp.Dirs, d)
	}
	return protocol.Response{Msg: resp}
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
