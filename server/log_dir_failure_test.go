package server

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A broker with two log dirs loses one: DescribeLogDirs reports it with
// KAFKA_STORAGE_ERROR, a produce to a partition in it gets
// KAFKA_STORAGE_ERROR while the other dir's partition takes the write, the
// controller (this broker's own, through /log_dir_event_notification)
// lists the replica offline in Metadata, and losing the second dir too
// makes the broker exit.
func TestLogDirFailureServed(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	// No controlled shutdown at the end: the session is closed by then.
	db := startDataBroker(t, dir, "log.dirs", a+","+b, "controlled.shutdown.enable", "false")
	halted := make(chan int, 1)
	db.b.halt = func(code int) { halted <- code }
	db.mustCreate(t, "t", 2, nil)
	inA := int32(-1)
	for p := range int32(2) {
		if _, err := os.Stat(filepath.Join(a, fmt.Sprintf("t-%d", p))); err == nil {
			inA = p
		}
	}
	if inA < 0 {
		t.Fatal("no partition in the first dir")
	}
	inB := 1 - inA

	db.b.logs.MarkDirOffline(a, &os.PathError{Op: "write", Path: a, Err: os.ErrInvalid})
	resp := rawRequest(t, db.addr, kmsg.NewPtrDescribeLogDirsRequest(), 1).(*kmsg.DescribeLogDirsResponse)
	codes := map[string]int16{}
	for _, d := range resp.Dirs {
		codes[filepath.Clean(d.Dir)] = d.ErrorCode
	}
	if codes[a] != kerr.KafkaStorageError.Code || codes[b] != 0 || len(codes) != 2 {
		t.Fatalf("DescribeLogDirs error codes %v", codes)
	}
	produce := func(p int32) int16 {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, rawBatch(t, plainOpts(), 1, time.Now().UnixMilli())
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return rawRequest(t, db.addr, req, 8).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
	}
	if code := produce(inA); code != kerr.KafkaStorageError.Code {
		t.Errorf("produce to the failed dir: %s", errName(code))
	}
	if code := produce(inB); code != 0 {
		t.Errorf("produce to the healthy dir: %s", errName(code))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		md := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr("t")
		md.Topics = append(md.Topics, mt)
		mresp := rawRequest(t, db.addr, md, 8).(*kmsg.MetadataResponse)
		var offline []int32
		for _, p := range mresp.Topics[0].Partitions {
			if p.Partition == inA {
				offline = p.OfflineReplicas
			}
		}
		if slices.Equal(offline, []int32{0}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metadata offline replicas of t-%d: %v", inA, offline)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case code := <-halted:
		t.Fatalf("halted (%d) with a dir left", code)
	default:
	}
	families, err := db.b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gauges := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if g := m.GetGauge(); g != nil {
				gauges[f.GetName()] = g.GetValue()
			}
		}
	}
	if gauges["kafka_log_logmanager_offlinelogdirectorycount"] != 1 || gauges["kafka_server_replicamanager_offlinereplicacount"] != 1 {
		t.Errorf("offline gauges: %v dirs, %v replicas", gauges["kafka_log_logmanager_offlinelogdirectorycount"], gauges["kafka_server_replicamanager_offlinereplicacount"])
	}

	// The broker closes its session before it halts; the stubbed halt
	// leaves Run to find the session closed.
	db.sessionClosed = true
	db.b.logs.MarkDirOffline(b, &os.PathError{Op: "write", Path: b, Err: os.ErrInvalid})
	select {
	case code := <-halted:
		if code != 1 {
			t.Fatalf("exit status %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit with every log dir failed")
	}
}
