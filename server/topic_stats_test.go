package server

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kbroker/kbroker/logstore"
)

func TestTopicStatsCountAsKafka(t *testing.T) {
	var b brokerTopicStats
	var a, c topicStats
	b.producedPartition(&a, 100, 3, nil)
	b.producedPartition(&a, 50, 0, kerr.NotLeaderForPartition)                                     // known cause: not failed
	b.producedPartition(&a, 70, 0, kerr.MessageTooLarge)                                           // rejected bytes
	b.producedPartition(&c, 10, 0, kerr.NotEnoughReplicas)                                         // failed
	b.producedPartition(&c, 10, 0, errors.Join(errors.New("disk"), kerr.OutOfOrderSequenceNumber)) // failed
	b.producedPartition(nil, 10, 1, nil)                                                           // unknown topic: nothing
	b.fetchedPartition(&a, nil)
	b.fetchedPartition(&a, logstore.ErrOffsetOutOfRange) // answered, not failed
	b.fetchedPartition(&c, errors.New("read failed"))
	b.add(&a, statBytesOut, 42)

	for _, x := range []struct {
		s    *topicStats
		i    int
		want uint64
	}{
		{&a, statTotalProduce, 3}, {&a, statMessagesIn, 3}, {&a, statBytesIn, 100}, {&a, statBytesRejected, 70},
		{&a, statFailedProduce, 0}, {&c, statFailedProduce, 2}, {&a, statTotalFetch, 2}, {&a, statFailedFetch, 0},
		{&c, statFailedFetch, 1}, {&a, statBytesOut, 42},
		{&b.all, statTotalProduce, 5}, {&b.all, statFailedProduce, 2}, {&b.all, statTotalFetch, 3}, {&b.all, statMessagesIn, 3},
	} {
		if got := x.s.counter(x.i).Load(); got != x.want {
			t.Errorf("%s = %d, want %d", topicStatNames[x.i].name, got, x.want)
		}
	}
}

// A topic's series are there once it counted something and gone once it
// left the topic table.
func TestTopicStatsSeriesFollowTheTopicTable(t *testing.T) {
	b := &Broker{}
	used, idle := &Topic{Name: "used", stats: &topicStats{}}, &Topic{Name: "idle", stats: &topicStats{}}
	b.setTopicsLocked(map[string]*Topic{"used": used, "idle": idle}, nil)
	b.topicStats.producedPartition(used.stats, 10, 2, nil)
	c := newTopicStatsCollector(b)
	want := `
# HELP kafka_server_brokertopicmetrics_messagesin_total Records appended as leader (MessagesInPerSec).
# TYPE kafka_server_brokertopicmetrics_messagesin_total counter
kafka_server_brokertopicmetrics_messagesin_total 2
kafka_server_brokertopicmetrics_messagesin_total{topic="used"} 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kafka_server_brokertopicmetrics_messagesin_total"); err != nil {
		t.Fatal(err)
	}
	b.setTopicsLocked(map[string]*Topic{"idle": idle}, nil)
	want = `
# HELP kafka_server_brokertopicmetrics_messagesin_total Records appended as leader (MessagesInPerSec).
# TYPE kafka_server_brokertopicmetrics_messagesin_total counter
kafka_server_brokertopicmetrics_messagesin_total 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kafka_server_brokertopicmetrics_messagesin_total"); err != nil {
		t.Fatal(err)
	}
}

// The cost BrokerTopicMetrics add to each produced partition, from both
// cores at once.
func BenchmarkTopicStatsProducedPartition(b *testing.B) {
	var bs brokerTopicStats
	var s topicStats
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			bs.producedPartition(&s, 1000, 10, nil)
		}
	})
}
