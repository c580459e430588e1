package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/compat/harness"
)

// Issue 13, disk trouble: one broker has two log dirs, one of them a
// small tmpfs that fills up (or turns read-only) while an idempotent
// acks=all producer runs. That dir goes offline on its broker as in
// Kafka (KIP-112, docs/log-dir-failure.md): the broker announces it
// through /log_dir_event_notification, the controller moves leadership
// of its replicas away and lists them as offline, clients asking that
// broker for them get KAFKA_STORAGE_ERROR, and the partitions on the
// broker's other dir keep being served by it. Once the operator freed the
// dir and restarted the broker, it serves the dir again and every replica
// rejoins its ISR; no acknowledged record is lost or duplicated and the
// replicas are identical below the HW.

const (
	diskVictim     = int32(3)
	diskTopic      = "disk-faults"
	diskPartitions = int32(6)
	logDirEventDir = "/log_dir_event_notification"
)

func TestLogDirFailure(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("TestLogDirFailure needs root: it mounts a tmpfs log dir and lowers a broker's file-size limit (run the cluster tests as root, as CI does)")
	}
	t.Run("full", func(t *testing.T) {
		testLogDirFailure(t, fillDir, func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("every-dir-fails", testEveryLogDirFails)
}

// testLogDirFailure: one of the victim's two dirs breaks (breakDir) and
// is repaired (healDir) before the victim restarts.
func testLogDirFailure(t *testing.T, breakDir, healDir func(t *testing.T, dir string)) {
	disk, small := t.TempDir(), mountTmpfs(t, "1m")
	c := harness.StartClusterPerBroker(t, 3, func(id int32) []string {
		if id == diskVictim {
			return []string{"log.dirs=" + disk + "," + small}
		}
		return nil
	})
	conn := c.ZK.Connect(t)
	victim := c.Broker(diskVictim)
	// The victim leads partitions 0-2 and follows 3-5; a broker spreads
	// new logs over its dirs by count, so each group has logs in both.
	assignment := map[int32][]int32{0: {3, 1, 2}, 1: {3, 2, 1}, 2: {3, 1, 2}, 3: {1, 3, 2}, 4: {2, 3, 1}, 5: {1, 2, 3}}
	createTopicAssigned(t, c, diskTopic, assignment, minISR2)
	waitFullISR(t, conn, diskTopic, diskPartitions, 3)
	var onSmall, onDisk []int32
	for p := range diskPartitions {
		if _, err := os.Stat(filepath.Join(small, fmt.Sprintf("%s-%d", diskTopic, p))); err == nil {
			onSmall = append(onSmall, p)
		} else {
			onDisk = append(onDisk, p)
		}
	}
	ledOnSmall, ledOnDisk := intersect(onSmall, []int32{0, 1, 2}), intersect(onDisk, []int32{0, 1, 2})
	t.Logf("broker %d: partitions %v on the tmpfs %s, %v on %s", diskVictim, onSmall, small, onDisk, disk)
	if len(ledOnSmall) == 0 || len(ledOnDisk) == 0 {
		t.Fatalf("the victim should lead partitions on both dirs: tmpfs %v, disk %v", onSmall, onDisk)
	}
	ctrl := waitController(t, conn, 10*time.Second, anyBroker)

	p := startChaosProducer(t, c.Addrs(), "df", diskPartitions, chaosAcksAllOpts(diskTopic)...)
	time.Sleep(3 * time.Second)
	_, _, events, err := conn.ChildrenW(logDirEventDir)
	if err != nil {
		t.Fatal(err)
	}
	before := p.count()
	breakDir(t, small)
	broke := time.Now()
	t.Logf("broke %s after %d acknowledged records (controller %d)", small, before, ctrl)

	// The broker takes the dir offline and says so in DescribeLogDirs.
	waitUntil(t, 20*time.Second, "DescribeLogDirs reports the tmpfs dir failed", func() error {
		dirs, err := describeLogDirs(t, victim.Addr)
		if err != nil {
			return err
		}
		if code := dirs[small].ErrorCode; code != kerr.KafkaStorageError.Code {
			return fmt.Errorf("tmpfs dir error %v", kerr.ErrorForCode(code))
		}
		if d := dirs[disk]; d.ErrorCode != 0 || len(d.Topics) != 1 || len(d.Topics[0].Partitions) != len(onDisk) {
			return fmt.Errorf("healthy dir %+v", d)
		}
		return nil
	})
	t.Logf("dir offline %v after the fault", time.Since(broke).Round(time.Millisecond))
	// The notification was written, and the controller consumed it.
	select {
	case ev := <-events:
		if ev.Type != zk.EventNodeChildrenChanged {
			t.Fatalf("watch on %s: %+v", logDirEventDir, ev)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no log dir event notification written")
	}
	waitUntil(t, 20*time.Second, "the controller consumed the log dir event", func() error {
		kids, _, err := conn.Children(logDirEventDir)
		if err != nil || len(kids) > 0 {
			return fmt.Errorf("children %v (%v)", kids, err)
		}
		if !logContains(c.Broker(ctrl).LogPath, "log directory failure reported", fmt.Sprintf("broker=%d", diskVictim)) {
			return fmt.Errorf("controller %d did not log the event", ctrl)
		}
		return nil
	})

	// Leadership of the victim's replicas on the failed dir moved, and
	// they left the ISR; those on its healthy dir did not move.
	for _, part := range ledOnSmall {
		s := waitLeaderChange(t, conn, diskTopic, part, diskVictim, 20*time.Second)
		t.Logf("partition %d: leader %d after the dir failed (%v)", part, s.Leader, time.Since(broke).Round(time.Millisecond))
	}
	waitUntil(t, 20*time.Second, "the victim leaves the ISR of its failed replicas", func() error {
		states, err := readStates(conn, diskTopic, diskPartitions)
		if err != nil {
			return err
		}
		for _, part := range onSmall {
			if slices.Contains(states[part].ISR, diskVictim) || states[part].Leader < 0 {
				return fmt.Errorf("partition %d: %+v", part, states[part])
			}
		}
		for _, part := range ledOnDisk {
			if states[part].Leader != diskVictim {
				return fmt.Errorf("partition %d on the healthy dir lost its leader: %+v", part, states[part])
			}
		}
		return nil
	})
	// Every broker's metadata lists the victim's failed replicas offline.
	for _, b := range c.Brokers {
		waitUntil(t, 10*time.Second, fmt.Sprintf("broker %d's metadata lists offline replicas", b.ID), func() error {
			resp, err := harness.MetadataFrom(testCtx(t, 5*time.Second), b.Addr, diskTopic)
			if err != nil || len(resp.Topics) != 1 {
				return fmt.Errorf("metadata: %v", err)
			}
			for _, mp := range resp.Topics[0].Partitions {
				want := []int32{}
				if slices.Contains(onSmall, mp.Partition) {
					want = []int32{diskVictim}
				}
				if !slices.Equal(orNone(mp.OfflineReplicas), want) || mp.Leader < 0 {
					return fmt.Errorf("partition %d: leader %d offline replicas %v, want %v", mp.Partition, mp.Leader, mp.OfflineReplicas, want)
				}
			}
			return nil
		})
	}
	// A client that asks the victim for a replica on the failed dir gets
	// KAFKA_STORAGE_ERROR; one on its healthy dir is written.
	raw := newClient(t, []string{victim.Addr}, kgo.RequestRetries(0), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProduceRequestTimeout(10*time.Second))
	if code := produceRaw(t, raw, ledOnSmall[0], "df-raw-failed"); code != kerr.KafkaStorageError.Code {
		t.Errorf("produce to the victim's replica on the failed dir: %v, want KAFKA_STORAGE_ERROR", kerr.ErrorForCode(code))
	}
	if code := produceRaw(t, raw, ledOnDisk[0], "df-raw-healthy"); code != 0 {
		t.Errorf("produce to the victim's replica on the healthy dir: %v", kerr.ErrorForCode(code))
	}
	// Writes go on everywhere, the partitions that moved included.
	perPart := ackedPerPartition(p)
	waitUntil(t, 20*time.Second, "every partition takes writes after the failure", func() error {
		now := ackedPerPartition(p)
		for part := range diskPartitions {
			if now[part] <= perPart[part] {
				return fmt.Errorf("partition %d: %d acknowledged, as many as before", part, now[part])
			}
		}
		return nil
	})
	if !victim.Running() {
		t.Fatalf("broker %d exited although one of its dirs is healthy", diskVictim)
	}
	t.Logf("%d records acknowledged since the fault", p.count()-before)

	// The operator frees the dir and restarts the broker.
	healDir(t, small)
	if err := victim.Term(); err != nil {
		t.Logf("stop broker %d: %v", diskVictim, err)
	}
	restartChecked(t, c, conn, diskVictim)
	waitISRSize(t, conn, diskTopic, diskPartitions, 3, 45*time.Second)
	dirs, err := describeLogDirs(t, victim.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if d := dirs[small]; d.ErrorCode != 0 || len(d.Topics) != 1 || len(d.Topics[0].Partitions) != len(onSmall) {
		t.Errorf("the tmpfs dir after the restart: %+v", d)
	}
	t.Logf("every replica back in its ISR %v after the fault", time.Since(broke).Round(time.Millisecond))
	time.Sleep(time.Second)
	acked := p.stop(t)

	hw := highWatermarks(t, c, diskTopic)
	read := readPartitionsToHW(t, c, diskTopic, hw)
	checkAckedExactlyOnce(t, diskTopic, acked, read)
	for _, v := range []string{"df-raw-failed", "df-raw-healthy"} {
		if n := len(read[v]); n != map[string]int{"df-raw-failed": 0, "df-raw-healthy": 1}[v] {
			t.Errorf("%s read %d times", v, n)
		}
	}
	stopAll(t, c)
	compareReplicaLogsIn(t, c, conn, hw, map[int32][]string{diskVictim: {disk, small}})
}

// A broker whose every log dir fails cannot store anything and exits, as
// Kafka's does, saying why; the cluster moves its leaderships and keeps
// taking writes, and a restart brings it back into every ISR. The writes
// fail here with EFBIG, not ENOSPC: the broker's file size limit is cut
// below its segments' sizes (prlimit), which fails every append whatever
// the dir. (A single dir failing with another error than ENOSPC cannot be
// induced cheaply on this machine: a tmpfs with files open for writing
// refuses to be remounted read-only, and there is no device-mapper to
// fail a block device; logstore's tests cover it with a file that refuses
// writes.)
func testEveryLogDirFails(t *testing.T) {
	c := harness.StartCluster(t, 3)
	conn := c.ZK.Connect(t)
	victim := c.Broker(diskVictim)
	assignment := map[int32][]int32{0: {3, 1, 2}, 1: {3, 2, 1}, 2: {3, 1, 2}, 3: {1, 3, 2}, 4: {2, 3, 1}, 5: {1, 2, 3}}
	createTopicAssigned(t, c, diskTopic, assignment, minISR2)
	waitFullISR(t, conn, diskTopic, diskPartitions, 3)
	// Segments of 2 MB in every partition first, so that a size limit of
	// 1 MB fails the appends but not the broker's own log file.
	bulk := newClient(t, c.Addrs(), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(diskTopic),
		kgo.ProducerBatchMaxBytes(900_000), kgo.ProducerBatchCompression(kgo.NoCompression()))
	big := make([]byte, 50_000)
	var recs []*kgo.Record
	for part := range diskPartitions {
		for i := range 40 {
			recs = append(recs, &kgo.Record{Partition: part, Value: fmt.Appendf(slices.Clone(big[:0]), "df-bulk-%d-%d-%s", part, i, big)})
		}
	}
	if err := bulk.ProduceSync(testCtx(t, 60*time.Second), recs...).FirstErr(); err != nil {
		t.Fatalf("bulk produce: %v", err)
	}
	if fi, err := os.Stat(victim.LogPath); err != nil || fi.Size() > 512<<10 {
		t.Fatalf("broker log %s: %v, size too close to the limit", victim.LogPath, err)
	}

	p := startChaosProducer(t, c.Addrs(), "dx", diskPartitions, chaosAcksAllOpts(diskTopic)...)
	time.Sleep(3 * time.Second)
	before := p.count()
	mustRun(t, "prlimit", "--pid", fmt.Sprint(victim.Pid()), fmt.Sprintf("--fsize=%d:unlimited", 1<<20))
	broke := time.Now()
	t.Logf("broker %d (pid %d) limited to 1 MB files after %d acknowledged records", diskVictim, victim.Pid(), before)
	waitUntil(t, 20*time.Second, fmt.Sprintf("broker %d exits", diskVictim), func() error {
		if victim.Running() {
			return errors.New("still running")
		}
		return nil
	})
	t.Logf("broker %d exited %v after the fault", diskVictim, time.Since(broke).Round(time.Millisecond))
	if !logContains(victim.LogPath, "every log directory has failed", "file too large") {
		t.Errorf("broker %d's log does not say why it exited", diskVictim)
	}
	for _, part := range []int32{0, 1, 2} {
		s := waitLeaderChange(t, conn, diskTopic, part, diskVictim, sessionTimeout+20*time.Second)
		t.Logf("partition %d: leader %d (%v after the fault)", part, s.Leader, time.Since(broke).Round(time.Millisecond))
	}
	perPart := ackedPerPartition(p)
	waitUntil(t, 20*time.Second, "every partition takes writes without the broker", func() error {
		now := ackedPerPartition(p)
		for part := range diskPartitions {
			if now[part] <= perPart[part] {
				return fmt.Errorf("partition %d: %d acknowledged, as many as before", part, now[part])
			}
		}
		return nil
	})
	restartChecked(t, c, conn, diskVictim)
	waitISRSize(t, conn, diskTopic, diskPartitions, 3, 45*time.Second)
	t.Logf("every replica back in its ISR %v after the fault", time.Since(broke).Round(time.Millisecond))
	time.Sleep(time.Second)
	acked := p.stop(t)
	for _, r := range recs {
		acked[string(r.Value)] = chaosAck{r.Partition, r.Offset}
	}
	finishChaos(t, c, conn, diskTopic, diskPartitions, acked)
}

// mountTmpfs mounts a tmpfs of size on a new directory, unmounted once
// the test's brokers are gone (cleanups run last-registered first).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, "mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v %s", name, args, err, out)
	}
}

// fillDir writes a file into dir until its file system is full.
func fillDir(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v", dir, err)
			}
			return
		}
	}
}

// describeLogDirs asks addr for every log dir, by path.
func describeLogDirs(t *testing.T, addr string) (map[string]kmsg.DescribeLogDirsResponseDir, error) {
	cl := newClient(t, []string{addr}, kgo.RequestRetries(0))
	defer cl.Close()
	req := kmsg.NewPtrDescribeLogDirsRequest()
	resp, err := sendVia(testCtx(t, 5*time.Second), cl, req)
	if err != nil {
		return nil, err
	}
	out := map[string]kmsg.DescribeLogDirsResponseDir{}
	for _, d := range resp.(*kmsg.DescribeLogDirsResponse).Dirs {
		out[d.Dir] = d
	}
	return out, nil
}

// produceRaw sends one record to partition of diskTopic on cl's seed
// broker only and returns the partition's error code.
func produceRaw(t *testing.T, cl *kgo.Client, partition int32, value string) int16 {
	t.Helper()
	req := produceRequest(diskTopic, partition, encodeBatch(-1, -1, -1, sameRecord{value: value}))
	resp, err := sendVia(testCtx(t, 15*time.Second), cl, req)
	if err != nil {
		t.Fatalf("produce %s: %v", value, err)
	}
	return resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

// ackedPerPartition counts the producer's acknowledged records by
// partition.
func ackedPerPartition(p *chaosProducer) map[int32]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int32]int{}
	for _, a := range p.acked {
		out[a.Partition]++
	}
	return out
}

// compareReplicaLogsIn is compareReplicaLogs for brokers with several log
// dirs (dirs by broker id; the others have their harness dir): each
// replica is read from the dir that holds it.
func compareReplicaLogsIn(t *testing.T, c *harness.Cluster, conn *zk.Conn, hw map[int32]int64, dirs map[int32][]string) {
	t.Helper()
	assignment, err := topicAssignment(conn, diskTopic)
	if err != nil {
		t.Fatal(err)
	}
	for part, replicas := range assignment {
		var ref []byte
		var refID int32
		for _, id := range replicas {
			candidates := dirs[id]
			if candidates == nil {
				candidates = []string{c.Broker(id).LogDir}
			}
			var got []byte
			err := fmt.Errorf("replica %d of partition %d in none of %v", id, part, candidates)
			for _, d := range candidates {
				if _, serr := os.Stat(filepath.Join(d, fmt.Sprintf("%s-%d", diskTopic, part))); serr == nil {
					got, err = logBytesBelow(d, diskTopic, part, hw[part])
					break
				}
			}
			if err != nil {
				t.Errorf("replica %d: %v", id, err)
				continue
			}
			if ref == nil {
				ref, refID = got, id
				continue
			}
			if !slices.Equal(ref, got) {
				t.Errorf("partition %d below HW %d: replicas %d (%d bytes) and %d (%d bytes) differ", part, hw[part], refID, len(ref), id, len(got))
			}
		}
		t.Logf("partition %d: replicas %v compared below HW %d (%d bytes)", part, replicas, hw[part], len(ref))
	}
}

// logContains reports whether one line of the log at path has every one
// of the strings.
func logContains(path string, all ...string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		ok := true
		for _, s := range all {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func intersect(a, b []int32) []int32 {
	var out []int32
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func orNone(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}
