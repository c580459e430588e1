package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbroker/kbroker/kafkazk"
	"github.com/kbroker/kbroker/metadataversion"
)

// A controller at an older inter.broker.protocol.version sends its
// requests at that IBP's versions, laid out as those versions have them,
// even to a broker that serves newer ones: they are encoded by franz-go
// and decoded by kbroker's protocol layer here, as a Kafka broker of that
// IBP would read them.
func TestRequestsAtTheIBPsVersions(t *testing.T) {
	plane := &controlPlane{vers: map[int16]int16{18: kmsg.NewPtrApiVersionsRequest().MaxVersion(), 4: 7, 6: 8, 5: 4}}
	ch := channelToPlane(t, plane)

	p0, d0 := kafkazk.TopicPartition{Topic: "t", Partition: 0}, kafkazk.TopicPartition{Topic: "doomed", Partition: 3}
	for _, c := range []struct {
		ibp           string
		lai, um, stop int16
		stopRequests  int
	}{
		{"3.9-IV0", 7, 8, 4, 1},
		{"2.8-IV1", 5, 7, 3, 1},
		{"2.6-IV0", 4, 6, 3, 1},
		{"2.4-IV1", 4, 6, 2, 2},
		{"2.2-IV0", 2, 5, 1, 2},
		{"1.0-IV0", 1, 4, 0, 2},
		{"0.9.0", 0, 1, 0, 2},
	} {
		t.Run(c.ibp, func(t *testing.T) {
			ibp, err := metadataversion.Parse(c.ibp)
			if err != nil {
				t.Fatal(err)
			}
			ctx := decideContext([]int32{1, 2}, map[kafkazk.TopicPartition][]int32{p0: {1, 2}, d0: {2, 1}})
			ctx.leadership[p0] = leadership(1, 4, []int32{1, 2}, 6)
			b := newRequestBatch(ctx)
			b.addLeaderAndIsr([]int32{2}, p0, ctx.leadership[p0], replicaAssignment{Replicas: []int32{1, 2}}, false)
			b.addUpdateMetadata([]int32{2}, []kafkazk.TopicPartition{p0})
			b.addStopReplica([]int32{2}, p0, false, 4)
			b.addStopReplica([]int32{2}, d0, true, leaderEpochDuringDelete)
			plane.mu.Lock()
			plane.got = nil
			plane.mu.Unlock()
			rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer rcancel()
			for _, o := range b.build(controllerIdentity{ID: 1, Epoch: 3, IBP: ibp}, "PLAINTEXT") {
				if o.broker != 2 {
					continue
				}
				if _, err := ch.Send(rctx, o.broker, o.req); err != nil {
					t.Fatalf("send %s: %v", kmsg.NameForKey(o.req.Key()), err)
				}
			}
			plane.mu.Lock()
			got := plane.got
			plane.mu.Unlock()
			if len(got) != 2+c.stopRequests {
				t.Fatalf("broker got %d requests, want %d", len(got), 2+c.stopRequests)
			}
			lai := got[0].(*kmsg.LeaderAndISRRequest)
			if lai.Version != c.lai || fmt.Sprint(laiLeaders(lai)) != "map[t-0:1/4]" {
				t.Errorf("LeaderAndIsr v%d (want v%d): %v", lai.Version, c.lai, laiLeaders(lai))
			}
			um := got[1].(*kmsg.UpdateMetadataRequest)
			if um.Version != c.um || fmt.Sprint(umLeaders(um)) != "map[t-0:1/4]" || len(um.LiveBrokers) != 2 ||
				um.LiveBrokers[0].Host+um.LiveBrokers[0].Endpoints[0].Host == "" {
				t.Errorf("UpdateMetadata v%d (want v%d): %v, live %+v", um.Version, c.um, umLeaders(um), um.LiveBrokers)
			}
			var stops []string
			for _, r := range got[2:] {
				sr := r.(*kmsg.StopReplicaRequest)
				if sr.Version != c.stop {
					t.Errorf("StopReplica v%d, want v%d", sr.Version, c.stop)
				}
				stops = append(stops, stopped(sr)...)
			}
			slices.Sort(stops)
			if fmt.Sprint(stops) != "[doomed-3:delete t-0:keep]" {
				t.Errorf("StopReplica: %v", stops)
			}
		})
	}
}

// laiLeaders: partition → leader/epoch, from either layout.
func laiLeaders(r *kmsg.LeaderAndISRRequest) map[string]string {
	out := map[string]string{}
	for _, ps := range r.PartitionStates {
		out[fmt.Sprintf("%s-%d", ps.Topic, ps.Partition)] = fmt.Sprintf("%d/%d", ps.Leader, ps.LeaderEpoch)
	}
	for _, ts := range r.TopicStates {
		for _, ps := range ts.PartitionStates {
			out[fmt.Sprintf("%s-%d", ts.Topic, ps.Partition)] = fmt.Sprintf("%d/%d", ps.Leader, ps.LeaderEpoch)
		}
	}
	return out
}

func umLeaders(r *kmsg.UpdateMetadataRequest) map[string]string {
	out := map[string]string{}
	for _, ps := range r.PartitionStates {
		out[fmt.Sprintf("%s-%d", ps.Topic, ps.Partition)] = fmt.Sprintf("%d/%d", ps.Leader, ps.LeaderEpoch)
	}
	for _, ts := range r.TopicStates {
		for _, ps := range ts.PartitionStates {
			out[fmt.Sprintf("%s-%d", ts.Topic, ps.Partition)] = fmt.Sprintf("%d/%d", ps.Leader, ps.LeaderEpoch)
		}
	}
	return out
}

// stopped lists "topic-partition:delete|keep" from any StopReplica layout.
func stopped(r *kmsg.StopReplicaRequest) []string {
	flag := func(del bool) string {
		if del {
			return "delete"
		}
		return "keep"
	}
	var out []string
	for _, t := range r.Topics {
		switch {
		case r.Version == 0:
			out = append(out, fmt.Sprintf("%s-%d:%s", t.Topic, t.Partition, flag(r.DeletePartitions)))
		case r.Version < 3:
			for _, p := range t.Partitions {
				out = append(out, fmt.Sprintf("%s-%d:%s", t.Topic, p, flag(r.DeletePartitions)))
			}
		default:
			for _, ps := range t.PartitionStates {
				out = append(out, fmt.Sprintf("%s-%d:%s", t.Topic, ps.Partition, flag(ps.Delete)))
			}
		}
	}
	return out
}
