package server

import (
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDescribeLogDirs(t *testing.T) {
	ab := startAdminBroker(t)
	ab.createTopic(t, "sized", 2, nil)
	ab.createTopic(t, "other", 1, nil)

	// Write something so the partition has a size.
	rec := &kgo.Record{Topic: "sized", Partition: 1, Value: make([]byte, 1000)}
	pcl := ab.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	defer pcl.Close()
	if err := pcl.ProduceSync(testCtx(t), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}

	req := kmsg.NewPtrDescribeLogDirsRequest()
	resp := request[*kmsg.DescribeLogDirsResponse](t, ab.cl, req)
	if resp.Version != 4 || len(resp.Dirs) != 1 {
		t.Fatalf("v%d, %d dirs", resp.Version, len(resp.Dirs))
	}
	d := resp.Dirs[0]
	if d.ErrorCode != 0 || filepath.Clean(d.Dir) != filepath.Join(ab.dir, "logs") || d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes {
		t.Fatalf("dir %+v", d)
	}
	got := map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for _, tp := range d.Topics {
		got[tp.Topic] = tp.Partitions
	}
	if len(got["sized"]) != 2 || len(got["other"]) != 1 {
		t.Fatalf("topics %+v", got)
	}
	if p := got["sized"][1]; p.Partition != 1 || p.Size < 1000 || p.OffsetLag != 0 || p.IsFuture {
		t.Fatalf("sized-1 %+v", p)
	}
	if p := got["sized"][0]; p.Size != 0 {
		t.Fatalf("empty partition has size %d", p.Size)
	}

	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = "sized", []int32{1, 7}
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{rt}
	resp = request[*kmsg.DescribeLogDirsResponse](t, ab.pinned(t, kmsg.DescribeLogDirs.Int16(), 1), req)
	d = resp.Dirs[0]
	if resp.Version != 1 || len(d.Topics) != 1 || d.Topics[0].Topic != "sized" || len(d.Topics[0].Partitions) != 1 || d.Topics[0].Partitions[0].Partition != 1 {
		t.Fatalf("filtered v%d: %+v", resp.Version, d.Topics)
	}
}
